package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

type yamlMap = yaml.MapSlice

// Load reads and parses a contract file, YAML or JSON. Errors in the file
// are *FileError values, several joined with errors.Join; the caller adds
// the file name when it reports them.
func Load(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load contracts: %w", err)
	}
	defer f.Close()
	// Read one byte past the limit so that Parse can tell a file that is
	// exactly MaxFileSize from one that is larger.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("load contracts: %w", err)
	}
	return Parse(data)
}

// Parse parses a contract file, YAML or the same structure as JSON, of at
// most MaxFileSize bytes. It returns a Set only for a valid file; otherwise
// it reports every problem it finds, each a *FileError naming its place,
// joined with errors.Join (a syntax error stops it at the first).
func Parse(data []byte) (*Set, error) {
	tree, err := decodeDocument(data)
	if err != nil {
		return nil, err
	}
	set, err := build(tree)
	if err != nil {
		return nil, err
	}
	set.source = append([]byte(nil), data...)
	return set, nil
}

func decodeDocument(data []byte) (any, error) {
	if len(data) > MaxFileSize {
		return nil, &FileError{Path: docPath, Message: fmt.Sprintf("larger than %d bytes", MaxFileSize)}
	}
	// Valid JSON is decoded as JSON: exact numbers, duplicate keys caught,
	// and none of YAML's guessing about what a scalar means.
	if json.Valid(data) {
		return decodeJSON(data)
	}
	return decodeYAML(data)
}

func decodeYAML(data []byte) (any, error) {
	tokens := lexer.Tokenize(string(data))
	if err := checkYAMLShape(tokens); err != nil {
		return nil, err
	}
	file, err := parser.Parse(tokens, 0)
	if err != nil {
		return nil, yamlError(err)
	}
	if len(file.Docs) > 1 {
		return nil, &FileError{Path: docPath, Message: "holds several YAML documents; a contract file is one"}
	}
	if len(file.Docs) == 0 || file.Docs[0].Body == nil {
		return nil, nil
	}
	var v any
	if err := yaml.NodeToValue(file.Docs[0].Body, &v, yaml.UseOrderedMap()); err != nil {
		return nil, yamlError(err)
	}
	return (&budget{}).fromYAML(v, "", 0)
}

// yamlError turns a goccy/go-yaml error into a one-line FileError that
// names the line and column.
func yamlError(err error) error {
	msg, tk := err.Error(), (*token.Token)(nil)
	var (
		syn  *yaml.SyntaxError
		dup  *yaml.DuplicateKeyError
		typ  *yaml.TypeError
		over *yaml.OverflowError
		node *yaml.UnexpectedNodeTypeError
	)
	switch {
	case errors.As(err, &syn):
		msg, tk = syn.Message, syn.Token
	case errors.As(err, &dup):
		msg, tk = dup.Message, dup.Token
	case errors.As(err, &typ):
		tk = typ.Token
	case errors.As(err, &over):
		msg, tk = "number out of range: "+over.SrcNum, over.Token
	case errors.As(err, &node):
		tk = node.Token
	}
	path := docPath
	if tk != nil && tk.Position != nil {
		path = fmt.Sprintf("line %d, column %d", tk.Position.Line, tk.Position.Column)
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return &FileError{Path: path, Message: "invalid YAML: " + strings.TrimSpace(msg)}
}
