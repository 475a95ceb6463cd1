package ovnmatch

import (
	"errors"
	"fmt"
)

type parser struct {
	toks []token
	pos  int
}

func (p *parser) peek() (token, bool) {
	if p.pos >= len(p.toks) {
		return token{}, false
	}
	return p.toks[p.pos], true
}

func (p *parser) next() (token, error) {
	t, ok := p.peek()
	if !ok {
		return token{}, errors.New("unexpected end")
	}
	p.pos++
	return t, nil
}

// expr: term (op term)*, one of && or || per level, as OVN requires.
func (p *parser) expr() error {
	if err := p.term(); err != nil {
		return err
	}
	op := ""
	for {
		t, ok := p.peek()
		if !ok || t.kind != kLog {
			return nil
		}
		if op != "" && t.text != op {
			return fmt.Errorf("&& and || mixed without parentheses")
		}
		op = t.text
		p.pos++
		if err := p.term(); err != nil {
			return err
		}
	}
}

// term: ! term | ( expr ) | field [relop value] | constant relop field.
func (p *parser) term() error {
	t, err := p.next()
	if err != nil {
		return err
	}
	switch {
	case t.kind == kNot:
		return p.term()
	case t.kind == kPunc && t.text == "(":
		if err := p.expr(); err != nil {
			return err
		}
		return p.expect(")")
	case t.kind == kField:
		if n, ok := p.peek(); ok && n.kind == kOp {
			p.pos++
			return p.value()
		}
		return nil // a boolean symbol: ip4, tcp, ...
	case t.kind == kConst:
		if n, err := p.next(); err != nil || n.kind != kOp {
			return fmt.Errorf("constant %s not compared to a field", t.text)
		}
		if f, err := p.next(); err != nil || f.kind != kField {
			return fmt.Errorf("constant %s not compared to a field", t.text)
		}
		return nil
	}
	return fmt.Errorf("unexpected %q", t.text)
}

// value: constant | { constant (, constant)* }.
func (p *parser) value() error {
	t, err := p.next()
	if err != nil {
		return err
	}
	if t.kind == kConst {
		return nil
	}
	if t.kind != kPunc || t.text != "{" {
		return fmt.Errorf("want a constant or a set, got %q", t.text)
	}
	for {
		c, err := p.next()
		if err != nil {
			return err
		}
		if c.kind != kConst {
			return fmt.Errorf("want a constant in the set, got %q", c.text)
		}
		sep, err := p.next()
		if err != nil {
			return err
		}
		if sep.text == "}" {
			return nil
		}
		if sep.text != "," {
			return fmt.Errorf("want , or } in the set, got %q", sep.text)
		}
	}
}

func (p *parser) expect(s string) error {
	t, err := p.next()
	if err != nil {
		return fmt.Errorf("want %q: %w", s, err)
	}
	if t.text != s {
		return fmt.Errorf("want %q, got %q", s, t.text)
	}
	return nil
}
