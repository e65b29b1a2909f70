package loader

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// readJSON reads the JSON objects in r, one after another, reading the
// items of each one at a time.
func readJSON(r io.Reader, c *Cluster) error {
	lim := &limitedReader{r: r}
	dec := json.NewDecoder(lim)
	for n := 1; ; n++ {
		lim.limit = dec.InputOffset() + MaxDocumentSize
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		where := fmt.Sprintf("document %d", n)
		switch {
		case err != nil:
			return jsonError(where, err)
		case tok == json.Delim('['):
			return fmt.Errorf("%s: a JSON array; want an object, such as the List kubectl get -o json writes", where)
		case tok != json.Delim('{'):
			return fmt.Errorf("%s: want an object, found %s", where, tokenType(tok))
		}
		d := &document{where: where}
		envelope, err := readObject(dec, lim, d)
		if err != nil {
			return err
		}
		if err := d.finish(c, envelope); err != nil {
			return err
		}
	}
}

// readObject reads the rest of an object whose '{' dec has read, hands
// its items to d and returns its other fields as a JSON object.
func readObject(dec *json.Decoder, lim *limitedReader, d *document) ([]byte, error) {
	envelope := []byte{'{'}
	var apiVersion, kind string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonError(d.where, err)
		}
		key, _ := tok.(string) // in an object, a key
		if key == "items" {
			if gv, err := schema.ParseGroupVersion(apiVersion); err == nil && isList(kind) {
				d.def = itemKind(gv.WithKind(kind))
			}
			if err := readItems(dec, lim, d); err != nil {
				return nil, err
			}
			lim.limit = dec.InputOffset() + MaxDocumentSize
			continue
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, jsonError(d.where, err)
		}
		switch key {
		case "apiVersion":
			_ = json.Unmarshal(value, &apiVersion) // a wrong type is reported later
		case "kind":
			_ = json.Unmarshal(value, &kind)
		}
		if len(envelope) > 1 {
			envelope = append(envelope, ',')
		}
		quoted, _ := json.Marshal(key) // a string always marshals
		envelope = append(append(append(envelope, quoted...), ':'), value...)
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, jsonError(d.where, err)
	}
	return append(envelope, '}'), nil
}

// readItems reads the value of an items field, handing each item of an
// array to d, each within MaxDocumentSize.
func readItems(dec *json.Decoder, lim *limitedReader, d *document) error {
	d.hasItems = true
	tok, err := dec.Token()
	if err != nil {
		return jsonError(d.where, err)
	}
	switch tok {
	case json.Delim('['):
	case nil:
		return nil
	case json.Delim('{'):
		d.badItems = "an object"
		return skipObject(dec, d.where)
	default:
		d.badItems = tokenType(tok)
		return nil
	}
	for dec.More() {
		lim.limit = dec.InputOffset() + MaxDocumentSize
		var item json.RawMessage
		if err := dec.Decode(&item); err != nil {
			return jsonError(fmt.Sprintf("%s: item %d", d.where, d.n+1), err)
		}
		d.item(item)
	}
	if _, err := dec.Token(); err != nil { // ']'
		return jsonError(d.where, err)
	}
	return nil
}

// skipObject reads the rest of an object whose '{' dec has read.
func skipObject(dec *json.Decoder, where string) error {
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return jsonError(where, err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// tokenType says what JSON value begins with tok, for errors.
func tokenType(tok json.Token) string {
	switch tok.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case json.Delim:
		return "a list"
	}
	return "null"
}

// jsonError is err, from reading the object named where: the end of the
// input within an object means the input was cut short.
func jsonError(where string, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%s: %w", where, err)
}

// limitedReader fails reads beyond limit, the offset in its input past
// which the object being read would exceed MaxDocumentSize. The JSON
// decoder reads more only when the value it is reading goes on past what
// it holds, so a read beyond limit means the value does.
type limitedReader struct {
	r     io.Reader
	n     int64 // bytes read
	limit int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n >= l.limit {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.limit-l.n {
		p = p[:l.limit-l.n]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	return n, err
}
