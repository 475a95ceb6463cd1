package ovnmatch

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ErrSyntax marks a match OVN would not parse.
var ErrSyntax = errors.New("invalid OVN match")

// Check reports the first syntax error of match, naming where it is.
func Check(match string) error {
	toks, err := lex(match)
	if err != nil {
		return fmt.Errorf("%w %q: %w", ErrSyntax, match, err)
	}
	p := &parser{toks: toks}
	if err := p.expr(); err != nil {
		return fmt.Errorf("%w %q: %w", ErrSyntax, match, err)
	}
	if p.pos != len(p.toks) {
		return fmt.Errorf("%w %q: unexpected %q", ErrSyntax, match, p.toks[p.pos].text)
	}
	return nil
}

type kind int

const (
	kField kind = iota // identifier, possibly subscripted
	kConst
	kOp   // relational operator
	kLog  // && or ||
	kNot  // !
	kPunc // ( ) { } ,
)

type token struct {
	kind kind
	text string
}

func lex(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case strings.HasPrefix(s[i:], "&&") || strings.HasPrefix(s[i:], "||"):
			out, i = append(out, token{kLog, s[i : i+2]}), i+2
		case strings.HasPrefix(s[i:], "==") || strings.HasPrefix(s[i:], "!=") || strings.HasPrefix(s[i:], "<=") || strings.HasPrefix(s[i:], ">="):
			out, i = append(out, token{kOp, s[i : i+2]}), i+2
		case c == '<' || c == '>':
			out, i = append(out, token{kOp, s[i : i+1]}), i+1
		case c == '!':
			out, i = append(out, token{kNot, "!"}), i+1
		case strings.IndexByte("(){},", c) >= 0:
			out, i = append(out, token{kPunc, s[i : i+1]}), i+1
		case c == '"':
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return nil, errors.New("unterminated string")
			}
			out, i = append(out, token{kConst, s[i : i+end+2]}), i+end+2
		default:
			t, n, err := word(s[i:])
			if err != nil {
				return nil, err
			}
			out, i = append(out, t), i+n
		}
	}
	return out, nil
}

// word reads an identifier (with an optional [a..b] subscript) or a constant.
func word(s string) (token, int, error) {
	n := 0
	for n < len(s) && (isWordByte(s[n])) {
		n++
	}
	if n < len(s) && s[n] == '[' { // subscript of a field: reg0[1..3]
		end := strings.IndexByte(s[n:], ']')
		if end < 0 {
			return token{}, 0, fmt.Errorf("unterminated subscript in %q", s)
		}
		n += end + 1
	}
	w := s[:n]
	switch {
	case n == 0:
		return token{}, 0, fmt.Errorf("unexpected character %q", s[0])
	case w[0] == '$' || w[0] == '@':
		if len(w) == 1 {
			return token{}, 0, fmt.Errorf("empty set name %q", w)
		}
		return token{kConst, w}, n, nil
	case isConst(w):
		return token{kConst, w}, n, nil
	case isIdent(w):
		return token{kField, w}, n, nil
	}
	return token{}, 0, fmt.Errorf("%q is neither a field nor a constant", w)
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("._:/$@-", c) >= 0
}

// isConst: an integer (decimal or 0x), an address, a prefix, address/mask, a MAC.
func isConst(w string) bool {
	if isInt(w) {
		return true
	}
	if _, err := netip.ParseAddr(w); err == nil {
		return true
	}
	if _, err := netip.ParsePrefix(w); err == nil {
		return true
	}
	if a, m, ok := strings.Cut(w, "/"); ok {
		_, e1 := netip.ParseAddr(a)
		_, e2 := netip.ParseAddr(m)
		return e1 == nil && e2 == nil
	}
	return isMAC(w)
}

func isInt(w string) bool {
	digits := "0123456789"
	if strings.HasPrefix(w, "0x") && len(w) > 2 {
		w, digits = w[2:], "0123456789abcdefABCDEF"
	}
	for i := 0; i < len(w); i++ {
		if strings.IndexByte(digits, w[i]) < 0 {
			return false
		}
	}
	return w != ""
}

func isMAC(w string) bool {
	parts := strings.Split(w, ":")
	if len(parts) != 6 {
		return false
	}
	for _, p := range parts {
		if len(p) != 2 || !isInt("0x"+p) {
			return false
		}
	}
	return true
}

// isIdent: letters, digits, _ and . separated parts, starting with a letter or _, with an
// optional subscript [n] or [a..b].
func isIdent(w string) bool {
	name, sub, hasSub := strings.Cut(w, "[")
	if hasSub {
		sub = strings.TrimSuffix(sub, "]")
		lo, hi, rng := strings.Cut(sub, "..")
		if !isInt(lo) || rng && !isInt(hi) {
			return false
		}
	}
	for _, part := range strings.Split(name, ".") {
		if part == "" || !(part[0] == '_' || part[0] >= 'a' && part[0] <= 'z' || part[0] >= 'A' && part[0] <= 'Z') {
			return false
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return false
			}
		}
	}
	return true
}
