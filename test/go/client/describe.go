// `client -describe` prints the JSON fields of every type the client decodes into (or sends), as
// test/go-client.test.ts holds them to the AsyncAPI document's schemas: each field's JSON name,
// its kind, and whether it may be absent.
package main

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"time"
)

type described struct {
	Kind     string `json:"kind"`
	Elem     string `json:"elem,omitempty"`
	Optional bool   `json:"optional"`
}

func kindOf(t reflect.Type) (string, string) {
	switch t {
	case reflect.TypeOf(time.Time{}):
		return "date-time", ""
	case reflect.TypeOf(json.RawMessage{}):
		return "json", ""
	}
	switch t.Kind() {
	case reflect.Ptr:
		return kindOf(t.Elem())
	case reflect.String:
		return "string", ""
	case reflect.Bool:
		return "boolean", ""
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return "integer", ""
	case reflect.Slice:
		elem, _ := kindOf(t.Elem())
		return "array", elem
	case reflect.Map, reflect.Struct:
		return "object", ""
	}
	return t.String(), ""
}

func fieldsOf(t reflect.Type, out map[string]described) map[string]described {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			fieldsOf(f.Type, out)
			continue
		}
		kind, elem := kindOf(f.Type)
		out[strings.Split(f.Tag.Get("json"), ",")[0]] = described{kind, elem, f.Type.Kind() == reflect.Ptr}
	}
	return out
}

func describe() {
	types := map[string]reflect.Type{
		"Request":       reflect.TypeOf(Request{}),
		"Answer":        reflect.TypeOf(Answer{}),
		"Entry":         reflect.TypeOf(Entry{}),
		"OutOfShape":    reflect.TypeOf(OutOfShape{}),
		"Cut":           reflect.TypeOf(Cut{}),
		"ErrorBody":     reflect.TypeOf(ErrorBody{}),
		"Error":         reflect.TypeOf(ErrorBody{}.Error),
		"Ping":          reflect.TypeOf(Ping{}),
		"Info":          reflect.TypeOf(Info{}),
		"EndpointInfo":  reflect.TypeOf(EndpointInfo{}),
		"Stats":         reflect.TypeOf(Stats{}),
		"EndpointStats": reflect.TypeOf(EndpointStats{}),
	}
	out := map[string]map[string]described{}
	for name, t := range types {
		out[name] = fieldsOf(t, map[string]described{})
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail("describe: %v", err)
	}
}
