package configfile

import (
	"errors"
	"flag"
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// Repeated is implemented by flag values that may be given several times (--ovn-nb twice
// for a raft cluster): in the file they take a YAML list, each element a Set.
type Repeated interface {
	flag.Value
	Repeated()
}

// Error is a problem with one entry of the file.
type Error struct {
	Path string
	Line int
	Key  string
	Err  error
}

func (e *Error) Error() string {
	return fmt.Sprintf("config %s line %d: %s: %v", e.Path, e.Line, e.Key, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Errors a caller may branch on; each arrives wrapped in an *Error naming the entry.
var (
	ErrUnknownKey = errors.New("unknown key")
	ErrDuplicate  = errors.New("given twice")
)

// Apply sets the flags of fs that the YAML document data (read from path, which names it in
// errors) gives values for, in the file's order. An empty document sets nothing.
func Apply(fs *flag.FlagSet, path string, data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // empty file, or only comments
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil // "---" and nothing else
	}
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("config %s line %d: want a mapping of option names to values", path, root.Line)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if err := apply(fs, k, v, seen); err != nil {
			return &Error{Path: path, Line: k.Line, Key: k.Value, Err: err}
		}
	}
	return nil
}

func apply(fs *flag.FlagSet, k, v *yaml.Node, seen map[string]bool) error {
	f := fs.Lookup(k.Value)
	switch {
	case k.Kind != yaml.ScalarNode:
		return errors.New("a key must be an option name")
	case f == nil:
		return ErrUnknownKey
	case seen[k.Value]:
		return ErrDuplicate
	}
	seen[k.Value] = true
	values, err := scalars(v, f)
	if err != nil {
		return err
	}
	for _, s := range values {
		if err := fs.Set(k.Value, s); err != nil {
			return fmt.Errorf("value %q: %w%s", s, err, hint(f))
		}
	}
	return nil
}

// scalars returns the texts to Set: the value itself, or each element of a list for a flag
// that repeats.
func scalars(v *yaml.Node, f *flag.Flag) ([]string, error) {
	_, repeats := f.Value.(Repeated)
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		return nil, errors.New("no value (remove the key, or comment it out, to keep the default)")
	case v.Kind == yaml.ScalarNode:
		return []string{v.Value}, nil
	case v.Kind == yaml.SequenceNode && !repeats:
		return nil, errors.New("a list given, but the option takes one value")
	case v.Kind == yaml.SequenceNode:
		out := make([]string, 0, len(v.Content))
		for _, e := range v.Content {
			if e.Kind != yaml.ScalarNode || e.Tag == "!!null" {
				return nil, fmt.Errorf("list element at line %d: want a plain value", e.Line)
			}
			out = append(out, e.Value)
		}
		if len(out) == 0 {
			return nil, errors.New("an empty list (remove the key to keep the default)")
		}
		return out, nil
	}
	return nil, errors.New("want a value or a list of values, not a mapping")
}

// hint says what the flag takes: package flag's own parse errors do not.
func hint(f *flag.Flag) string {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return " (want true or false)"
	}
	switch name, _ := flag.UnquoteUsage(f); name {
	case "duration":
		return " (want a duration such as 30s or 1m30s)"
	case "int", "uint":
		return " (want a whole number)"
	}
	return ""
}
