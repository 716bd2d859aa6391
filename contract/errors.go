package contract

import (
	"fmt"
	"strconv"
	"strings"
)

// ValidationError is a job that a contract rejected. Field names the input
// at fault ("kind", "op", "priority", "max_retries", "payload" or
// "payload.<path>"), Message the rule it broke. The server answers it as
// HTTP 400 with code invalid_argument, field Field and message Message.
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Message }

func invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// FileError is a problem in a contract file. Path names the place:
// "kinds.file.payload", "kinds.file.unique.fields[0]",
// "defaults.backoff.factor", "line 3, column 5" for a syntax error, or
// "document" for the file as a whole.
type FileError struct {
	Path    string
	Message string
}

func (e *FileError) Error() string { return e.Path + ": " + e.Message }

// docPath names the file as a whole in a FileError.
const docPath = "document"

// problems collects every FileError of one file, so that a user fixes them
// all in one round instead of one per run.
type problems struct {
	errs []error
}

func (p *problems) add(path, format string, args ...any) {
	p.errs = append(p.errs, &FileError{Path: path, Message: fmt.Sprintf(format, args...)})
}

// join builds the path of a child under path. Keys that are not plain
// identifiers are quoted so that a kind named "a.b" stays unambiguous.
func join(path, key string) string {
	seg := key
	if !plainKey(key) {
		seg = "[" + strconv.Quote(key) + "]"
	}
	if path == "" || path == docPath {
		if strings.HasPrefix(seg, "[") {
			return docPath + seg
		}
		return seg
	}
	if strings.HasPrefix(seg, "[") {
		return path + seg
	}
	return path + "." + seg
}

// index builds the path of list element i under path.
func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

func plainKey(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '$' || isAlnum(r)) {
			return false
		}
	}
	return true
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}
