package fwk

import (
	"errors"
	"strconv"
	"strings"
)

// Code is the outcome of a plugin call. The zero value is Success.
type Code int

// The codes a plugin may return, with kube-scheduler's meanings.
const (
	// Success: the pod may go on (Filter) or the call worked (others).
	Success Code = iota
	// Error: something is broken (bad input, a bug); scheduling stops with
	// an error rather than a verdict about the node.
	Error
	// Unschedulable: the node does not fit the pod now; preempting pods
	// might make it fit.
	Unschedulable
	// UnschedulableAndUnresolvable: the node does not fit and preemption
	// would not help.
	UnschedulableAndUnresolvable
	// Skip: from PreFilter or PreScore, the plugin has nothing to do for
	// this pod and its Filter or Score is not called.
	Skip
)

var codeNames = [...]string{"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Skip"}

// String returns kube-scheduler's name for the code.
func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Code(" + strconv.Itoa(int(c)) + ")"
}

// Status is a plugin's verdict. A nil *Status means Success, and every
// method works on a nil receiver, so plugins return nil when all is well.
// A Status is immutable once returned; plugins may return shared values.
type Status struct {
	code    Code
	reasons []string
	err     error
	plugin  string
}

// NewStatus returns a status with the given code and reasons.
func NewStatus(code Code, reasons ...string) *Status {
	return &Status{code: code, reasons: reasons}
}

// AsStatus wraps an error as an Error status; a nil error gives nil.
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{code: Error, reasons: []string{err.Error()}, err: err}
}

// Code returns the status code; Success for nil.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// Reasons returns the reason strings, as kube-scheduler words them.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	return s.reasons
}

// Message joins the reasons with ", ".
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.reasons, ", ")
}

// Plugin returns the name of the plugin that produced the status, set by
// the framework.
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// IsSuccess reports whether the status is nil or Success.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsSkip reports whether the code is Skip.
func (s *Status) IsSkip() bool { return s.Code() == Skip }

// IsRejected reports whether the pod does not fit: Unschedulable or
// UnschedulableAndUnresolvable.
func (s *Status) IsRejected() bool {
	c := s.Code()
	return c == Unschedulable || c == UnschedulableAndUnresolvable
}

// AsError returns the status as an error: nil for Success and Skip, the
// wrapped error for one made by [AsStatus], otherwise the message.
func (s *Status) AsError() error {
	if s.IsSuccess() || s.IsSkip() {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return errors.New(s.Message())
}

// WithPlugin returns the status attributed to plugin. It returns s itself
// when it already is, so plugins that return preallocated statuses carrying
// their own name cost no allocation; otherwise a copy.
func (s *Status) WithPlugin(plugin string) *Status {
	if s == nil || s.plugin == plugin {
		return s
	}
	c := *s
	c.plugin = plugin
	return &c
}

// String describes the status for logs.
func (s *Status) String() string {
	if s == nil {
		return "Success"
	}
	var b strings.Builder
	b.WriteString(s.code.String())
	if s.plugin != "" {
		b.WriteString(" (" + s.plugin + ")")
	}
	if len(s.reasons) > 0 {
		b.WriteString(": " + s.Message())
	}
	return b.String()
}
