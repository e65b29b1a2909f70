package loader

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"
)

// readYAML reads the YAML documents in br.
//
// The items of a List are read one at a time, when they are a block
// sequence under a top-level "items:", as kubectl writes them: each item,
// from one "- " at the sequence's indentation to the next, is cut out,
// moved left and converted on its own. Items written otherwise (a flow
// sequence, say) are read with the rest of their document.
//
// An item on its own cannot see the anchors of the items before it, nor
// of the rest of the document. So once a line of the document may
// define an anchor (see mayAnchor), the items from there on are kept as
// written too, and if an item has an alias to an anchor it cannot see,
// those items and the rest of the document are read together, as one:
// the items read already are not read again. Kept items are bounded by
// MaxDocumentSize, like a document; kubectl writes no anchors, so a
// dump keeps none.
func readYAML(br *bufio.Reader, c *Cluster) error {
	y := &yamlReader{br: br, c: c}
	for {
		more, err := y.document()
		if err != nil || !more {
			return err
		}
	}
}

// yamlReader splits YAML documents into lines and a document into its
// List's items and the rest, its envelope.
type yamlReader struct {
	br *bufio.Reader
	c  *Cluster
	// line is the line just read; carry, when set, is the first line of
	// the next document: a "--- " line with content.
	line, carry []byte
	// docs is the number of documents with content so far.
	docs int

	// The document being read:
	d     *document // nil until a line with content
	state int
	// seq is the indentation of the items' "- ".
	seq int
	// envelope is the document but its streamed items; held is the
	// "items:" line and the blank lines after it until it is known
	// whether a block sequence follows; item is the item being read,
	// moved left by seq+2 columns, and itemRaw the same as written.
	envelope, held, item, itemRaw []byte
	// split is the length of envelope when the items began.
	split int

	// For anchors (see readYAML): anchored says that a line read may
	// define one; kept are the items as written from the first read
	// since, keptN of them, or with keptOver, none, for being more than
	// MaxDocumentSize.
	anchored, keptOver bool
	kept               []byte
	keptN              int
}

// The yamlReader's states in a document.
const (
	inTop      = iota // at the top level of the document
	afterItems        // after a top-level "items:" line
	inItems           // in the block sequence of items
	inRest            // in items read with the rest of the document
)

// document reads the next document and adds what it holds to y.c. It
// says whether more documents may follow.
func (y *yamlReader) document() (more bool, err error) {
	y.d, y.state = nil, inTop
	y.envelope, y.held, y.item, y.itemRaw, y.split = y.envelope[:0], y.held[:0], y.item[:0], y.itemRaw[:0], 0
	y.anchored, y.keptOver, y.kept, y.keptN = false, false, y.kept[:0], 0
	if y.carry != nil {
		if err := y.add(y.carry); err != nil {
			return false, err
		}
		y.carry = nil
	}
	for {
		line, err := y.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, fmt.Errorf("%s: %w", y.where(), err)
		}
		if sep, first := separator(line); sep {
			if first {
				y.carry = bytes.Clone(line)
			}
			more = true
			break
		}
		if err := y.add(line); err != nil {
			return false, err
		}
	}
	switch y.state {
	case afterItems:
		if err := y.grow(&y.envelope, y.held); err != nil {
			return false, err
		}
	case inItems:
		if err := y.flushItem(); err != nil {
			return false, err
		}
	}
	if y.d == nil {
		return more, nil // empty, or comments only
	}
	data, err := yaml.YAMLToJSON(y.envelope)
	if err != nil && unknownAnchor(err) && y.state != inRest && y.keptN > 0 {
		// After the items, an alias to an anchor in one.
		if err := y.readTogether(); err != nil {
			return false, err
		}
		data, err = yaml.YAMLToJSON(y.envelope)
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", y.d.where, err)
	}
	switch {
	case string(data) == "null" && y.d.n == 0:
		return more, nil // an explicit null, as empty
	case string(data) == "null":
		data = []byte("{}") // nothing but items, which finish reports
	case data[0] != '{':
		return false, fmt.Errorf("%s: want an object, found %s", y.d.where, jsonType(data))
	}
	return more, y.d.finish(y.c, data)
}

// add takes in the next line of the document.
func (y *yamlReader) add(line []byte) error {
	// Directives before a document's content (%YAML 1.1) are YAML's
	// defaults, or tag shorthands kubectl never writes.
	blank := isBlank(line) || y.d == nil && line[0] == '%'
	if !blank && y.d == nil {
		y.docs++
		y.d = &document{where: fmt.Sprintf("document %d", y.docs)}
	}
	y.anchored = y.anchored || mayAnchor(line)
	for {
		switch y.state {
		case inTop:
			if isItemsKey(line) {
				y.state, y.split = afterItems, len(y.envelope)
				return y.grow(&y.held, line)
			}
			return y.grow(&y.envelope, line)
		case inRest:
			return y.grow(&y.envelope, line)
		case afterItems:
			if blank {
				return y.grow(&y.held, line)
			}
			if n, ok := dash(line); ok {
				y.state, y.seq = inItems, n
				y.d.hasItems = true
				return y.appendItem(line, true)
			}
			// Not a block sequence: the items stay in the envelope.
			y.state = inTop
			if err := y.grow(&y.envelope, y.held); err != nil {
				return err
			}
			y.held = y.held[:0]
		case inItems:
			if blank || indentation(line) > y.seq {
				return y.appendItem(line, false)
			}
			if err := y.flushItem(); err != nil {
				return err
			}
			if y.state == inRest {
				continue
			}
			if n, ok := dash(line); ok && n == y.seq {
				return y.appendItem(line, true)
			}
			y.state = inTop
		}
	}
}

// grow appends lines to buf, within MaxDocumentSize.
func (y *yamlReader) grow(buf *[]byte, lines []byte) error {
	if len(*buf)+len(lines) > MaxDocumentSize {
		return fmt.Errorf("%s: %w", y.where(), errTooLarge)
	}
	*buf = append(*buf, lines...)
	return nil
}

// appendItem appends a line of an item to y.item, moved left past the
// sequence's "- ", and to y.itemRaw.
func (y *yamlReader) appendItem(line []byte, first bool) error {
	if len(y.item)+len(line) > MaxDocumentSize {
		return fmt.Errorf("%s: %w", y.where(), errTooLarge)
	}
	y.itemRaw = append(y.itemRaw, line...)
	start := len(y.item)
	y.item = append(y.item, line...)
	l := y.item[start:]
	if first {
		l[y.seq] = ' '
		if y.seq+1 < len(l) && l[y.seq+1] == '\t' {
			l[y.seq+1] = ' '
		}
	}
	k := 0
	for k < y.seq+2 && k < len(l) && l[k] == ' ' {
		k++
	}
	copy(l, l[k:])
	y.item = y.item[:len(y.item)-k]
	return nil
}

// flushItem hands the item read to the document; or, if it has an
// alias to an anchor outside it, reads it with the rest of the document.
func (y *yamlReader) flushItem() error {
	data, err := yaml.YAMLToJSON(y.item)
	switch {
	case err != nil && unknownAnchor(err) && y.anchored && !y.keptOver:
		return y.readTogether()
	case err != nil && unknownAnchor(err) && y.anchored:
		return fmt.Errorf("%s: %w: read with the items before it, from the first that may hold the anchor, it is larger than MaxDocumentSize (%d MiB)", y.where(), err, MaxDocumentSize>>20)
	case err != nil:
		return fmt.Errorf("%s: %w", y.where(), err)
	}
	if y.anchored && !y.keptOver {
		if len(y.kept)+len(y.itemRaw) > MaxDocumentSize {
			y.kept, y.keptOver = nil, true
		} else {
			y.kept = append(y.kept, y.itemRaw...)
			y.keptN++
		}
	}
	y.d.item(data)
	y.item, y.itemRaw = y.item[:0], y.itemRaw[:0]
	return nil
}

// readTogether puts back in the envelope, where they were written, the
// items kept and the one being read, so that the rest of the document
// is read with them, as one; the document skips the kept ones, which
// it has.
func (y *yamlReader) readTogether() error {
	rest := bytes.Clone(y.envelope[y.split:])
	y.envelope = y.envelope[:y.split]
	for _, part := range [][]byte{y.held, y.kept, y.itemRaw, rest} {
		if err := y.grow(&y.envelope, part); err != nil {
			return err
		}
	}
	y.d.skip = y.keptN
	y.state = inRest
	y.kept, y.keptN, y.item, y.itemRaw = y.kept[:0], 0, y.item[:0], y.itemRaw[:0]
	return nil
}

// unknownAnchor says whether err is YAML's for an alias to an anchor it
// has not seen.
func unknownAnchor(err error) bool {
	return strings.Contains(err.Error(), "unknown anchor")
}

// mayAnchor says whether line may define a YAML anchor: whether it has
// an "&" where a node may begin (at the start of the line, after white
// space or after one of "[{,:"), followed by a character an anchor's
// name may begin with. A string may look like one ("a &b"), and so
// cost what is kept for it, but no anchor is missed.
func mayAnchor(line []byte) bool {
	for i := bytes.IndexByte(line, '&'); i >= 0; {
		if i+1 < len(line) && isAnchorChar(line[i+1]) &&
			(i == 0 || strings.IndexByte(" \t[{,:", line[i-1]) >= 0) {
			return true
		}
		next := bytes.IndexByte(line[i+1:], '&')
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}

// isAnchorChar says whether b may be in an anchor's name, as the YAML
// parser reads them.
func isAnchorChar(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || b == '_' || b == '-'
}

// where names the document, and item, being read in errors.
func (y *yamlReader) where() string {
	if y.d == nil {
		return fmt.Sprintf("document %d", y.docs+1)
	}
	if y.state == inItems {
		return fmt.Sprintf("%s: item %d", y.d.where, y.d.n+1)
	}
	return y.d.where
}

// next returns the next line, with its line break if it has one, valid
// until the next call; io.EOF at the end of the input.
func (y *yamlReader) next() ([]byte, error) {
	y.line = y.line[:0]
	for {
		chunk, err := y.br.ReadSlice('\n')
		if len(y.line)+len(chunk) > MaxDocumentSize {
			return nil, errTooLarge
		}
		y.line = append(y.line, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(y.line) > 0:
			return y.line, nil
		}
		return y.line, err
	}
}

// separator says whether line ends a document ("---" or "...", alone or
// before a comment) or begins one ("---" before content: then the line is
// the first of the next document).
func separator(line []byte) (sep, first bool) {
	if !bytes.HasPrefix(line, []byte("---")) && !bytes.HasPrefix(line, []byte("...")) {
		return false, false
	}
	if len(line) > 3 && !isSpace(line[3]) {
		return false, false
	}
	rest := bytes.TrimSpace(line[3:])
	return true, line[0] == '-' && len(rest) > 0 && rest[0] != '#'
}

// isItemsKey says whether line is "items:" at the top level, with its
// value on the lines after it.
func isItemsKey(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("items:"))
	if !ok {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || rest[0] == '#'
}

// dash returns the indentation of a line beginning a sequence item.
func dash(line []byte) (int, bool) {
	n := indentation(line)
	if n < len(line) && line[n] == '-' && (n+1 == len(line) || isSpace(line[n+1])) {
		return n, true
	}
	return 0, false
}

func indentation(line []byte) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n
}

// isBlank says whether line holds nothing but white space or a comment.
func isBlank(line []byte) bool {
	line = bytes.TrimSpace(line)
	return len(line) == 0 || line[0] == '#'
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\r' || b == '\n'
}
