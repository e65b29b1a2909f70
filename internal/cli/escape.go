package cli

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// terminalSafe wraps w so that control characters in what is written —
// object names and messages come from the input, which may hold ANSI
// escape sequences — reach the terminal escaped (\x1b), not obeyed. Line
// feeds and tabs, which the tables are made of, pass.
func terminalSafe(w io.Writer) io.Writer { return &escaper{w: w} }

type escaper struct{ w io.Writer }

func (e *escaper) Write(p []byte) (int, error) {
	clean := true
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		if isControl(r, size) {
			clean = false
			break
		}
		i += size
	}
	if clean {
		return e.w.Write(p)
	}
	out := make([]byte, 0, len(p)+16)
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		if isControl(r, size) {
			out = fmt.Appendf(out, `\x%02x`, r)
		} else {
			out = append(out, p[i:i+size]...)
		}
		i += size
	}
	if _, err := e.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// isControl reports whether r, of size bytes, is a C0 or C1 control
// character other than a line feed or a tab, or DEL.
func isControl(r rune, size int) bool {
	if r == utf8.RuneError && size == 1 {
		return false
	}
	return r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f
}
