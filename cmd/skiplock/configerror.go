package main

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"
)

// excerptError is an error whose one line on stderr is followed by lines
// of the input at fault (a YAML file's excerpt with a caret).
type excerptError struct {
	err     error
	excerpt string
}

func (e *excerptError) Error() string { return e.err.Error() }
func (e *excerptError) Unwrap() error { return e.err }

// configFileError turns a YAML error of the config file at path into a
// usage error: one self-sufficient line ("config file F: line 2, column 1:
// unknown field …"), then the file's excerpt.
func configFileError(path string, err error) error {
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil || ye.GetToken().Position == nil {
		return usagef("config file %s: %s", path, oneLine(err.Error()))
	}
	pos := ye.GetToken().Position
	line := fmt.Errorf("config file %s: line %d, column %d: %s", path, pos.Line, pos.Column, yamlMessage(ye))
	excerpt := ""
	if formatted := ye.FormatError(false, true); strings.Contains(formatted, "\n") {
		excerpt = strings.TrimRight(formatted[strings.IndexByte(formatted, '\n')+1:], " \n") + "\n"
	}
	return &usageError{err: &excerptError{err: line, excerpt: excerpt}}
}

// yamlMessage says what is wrong in the config file's terms, not Go's.
func yamlMessage(ye yaml.Error) string {
	var (
		typ     *yaml.TypeError
		unknown *yaml.UnknownFieldError
	)
	switch {
	case errors.As(ye, &typ):
		return fmt.Sprintf("want %s, got %s", kindName(typ.DstType), kindName(typ.SrcType))
	case errors.As(ye, &unknown):
		return fmt.Sprintf("%s (known: %s)", unknown.Message, strings.Join(configKeys(), ", "))
	}
	return ye.GetMessage()
}

func kindName(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean (true or false)"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	case reflect.Pointer:
		return kindName(t.Elem())
	}
	return t.String()
}

// configKeys answers the top-level keys of the config file.
func configKeys() []string {
	t := reflect.TypeOf(serveConfig{})
	var keys []string
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}
