package cli

import (
	"fmt"
	"html/template"
	"io"
	"strings"
)

// page is the one self-contained HTML page -o html writes: styles
// inline, no script, reasons in each cell's title (shown on hover).
var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"verdictTitle": verdictTitle,
	"scoreStyle":   scoreStyle,
	"scoreTitle":   scoreTitle,
	"filterCell":   filterCell,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>kubesched: {{.Title}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h2 { margin: 1.6em 0 0.2em; font-size: 1.2em; }
p.answer { margin: 0.2em 0 0.8em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: center; white-space: nowrap; }
th.node, td.node { text-align: left; font-family: ui-monospace, monospace; }
th.plugin { writing-mode: vertical-rl; transform: rotate(180deg); font-weight: normal; font-size: 12px; }
td.pass { background: #d7f0d2; }
td.reject { background: #f6c7c3; font-weight: bold; }
td.first { outline: 2px solid #b3261e; outline-offset: -2px; }
td.skip { background: #eee; color: #888; }
td.error { background: #ffd79a; }
td.none { background: #fafafa; color: #aaa; }
tr.chosen td.node { background: #2e7d32; color: white; font-weight: bold; }
tr.tied td.node { background: #a5d6a7; }
.legend span { display: inline-block; padding: 1px 8px; margin-right: 6px; border: 1px solid #ccc; }
.legend .first { outline: 2px solid #b3261e; outline-offset: -2px; }
.msg { font-family: ui-monospace, monospace; background: #f4f4f4; padding: 4px 6px; }
ul.closest, details.findings ul { margin: 0.2em 0 1em; font-size: 13px; }
span.node { font-family: ui-monospace, monospace; }
</style>
</head>
<body>
<h1>kubesched: {{.Title}}</h1>
<p class="legend">Filters:
<span class="pass" style="background:#d7f0d2">passes</span>
<span style="background:#f6c7c3">rejects</span>
<span class="first" style="background:#f6c7c3">rejects first: what kube-scheduler reports</span>
<span style="background:#eee">skipped by PreFilter</span>
<span style="background:#ffd79a">error</span>
Scores: darker green is a higher normalized score; each cell shows the weighted score.
Hover over a cell for its reasons and raw scores; what the filters found is listed under each table. The chosen node is dark green.</p>
{{range .Pods}}
<h2 id="{{.Pod}}">Pod {{.Pod}} <small>(profile {{.Profile}})</small></h2>
{{if .Node}}<p class="answer">kube-scheduler {{.KubeScheduler}} binds it to <b>{{.Node}}</b>: {{.FeasibleNodes}} of {{.EvaluatedNodes}} nodes evaluated are feasible{{if .Tied}}; tied with {{range $i, $t := .Tied}}{{if $i}}, {{end}}{{$t}}{{end}}, of which it picks one at random{{end}}.</p>
{{else if .NotTried}}<p class="answer">kube-scheduler {{.KubeScheduler}} does not try it: <span class="msg">{{.Message}}</span>{{with .NotTried.Plugin}} ({{.}}){{end}}</p>
{{else}}<p class="answer">kube-scheduler {{.KubeScheduler}}: <span class="msg">{{.Message}}</span></p>
{{with .Preemption}}<p class="answer preemption">DefaultPreemption {{.Sentence}}.</p>{{end}}{{end}}
{{$r := .}}{{if not .NotTried}}
<table>
<thead><tr><th class="node">node</th>{{range .Filters}}<th class="plugin">{{.}}</th>{{end}}{{range .Scores}}<th class="plugin">{{.Plugin}} ×{{.Weight}}</th>{{end}}{{if .Scores}}<th>total</th>{{end}}</tr></thead>
<tbody>
{{range .Nodes}}<tr class="{{if eq .Name $r.Node}}chosen{{else if $r.IsTied .Name}}tied{{end}}"><td class="node" title="{{verdictTitle .KubeScheduler}}">{{.Name}}</td>
{{$n := .}}{{range $i, $f := .Filters}}{{filterCell $n $f}}{{else}}{{range $r.Filters}}<td class="none" title="{{verdictTitle $n.KubeScheduler}}">·</td>{{end}}{{end}}
{{if .Feasible}}{{range $i, $s := .Scores}}<td style="{{scoreStyle $s.Normalized}}" title="{{scoreTitle $s ($r.Weight $i)}}">{{$s.Weighted}}</td>{{end}}<td><b>{{.Total}}</b></td>
{{else}}{{range $r.Scores}}<td class="none"></td>{{end}}{{if $r.Scores}}<td class="none"></td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table>
{{with .ClosestWhy}}<p class="closest">Closest to fitting:</p><ul class="closest">{{range .}}<li><span class="node">{{.Name}}</span>: {{range $i, $r := .Reasons}}{{if $i}}; {{end}}{{$r}}{{end}}</li>{{end}}</ul>{{end}}
{{with .Findings}}<details class="findings" open><summary>What the filters found</summary><ul>{{range .}}<li>{{.}}</li>{{end}}</ul></details>{{end}}
{{end}}{{end}}
{{with .Place}}
{{range .Changes}}<p>What if: {{.}}.</p>{{end}}
<p class="answer">Placed {{.Placed}} of {{.Total}} pending pods, each placement kept for the next{{if .NotTried}}; {{.NotTried}} not tried, as kube-scheduler does not try them{{end}}.</p>
<table>
<thead><tr><th class="node">pod</th><th class="node">node</th><th class="node">why not, when it was tried</th></tr></thead>
<tbody>
{{range .Placements}}<tr><td class="node">{{.Pod}}</td>{{if .Node}}<td class="node pass">{{.Node}}</td><td class="node" style="text-align:left;white-space:normal">{{with .Preemption}}DefaultPreemption {{.Sentence}} (acted on){{end}}</td>{{else}}<td class="node reject">{{if .NotTried}}not tried{{else}}none{{end}}</td><td class="node" style="text-align:left;white-space:normal"><span class="msg">{{.Message}}</span>{{with .Preemption}}<br>DefaultPreemption {{.Sentence}} (not acted on){{end}}{{range .Closest}}<br>{{.Name}}: {{range $i, $r := .Reasons}}{{if $i}}; {{end}}{{$r}}{{end}}{{end}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{end}}
</body>
</html>
`))

// htmlPage is what the page template reads.
type htmlPage struct {
	Title string
	Pods  []*podReport
	Place *htmlPlace
}

type htmlPlace struct {
	*placeReport
	Total int
}

// IsTied reports whether node is tied with the chosen one.
func (r *podReport) IsTied(node string) bool {
	for _, t := range r.Tied {
		if t == node {
			return true
		}
	}
	return false
}

// Weight returns score plugin i's weight.
func (r *podReport) Weight(i int) int32 { return r.Scores[i].Weight }

func writeHTML(w io.Writer, reports []*podReport) error {
	title := "why pods are pending"
	if len(reports) == 1 {
		title = "pod " + reports[0].Pod
	}
	return page.Execute(w, htmlPage{Title: title, Pods: reports})
}

func writePlaceHTML(w io.Writer, rep *placeReport) error {
	return page.Execute(w, htmlPage{Title: "placing the pending pods", Place: &htmlPlace{placeReport: rep, Total: rep.Placed + rep.Pending}})
}

// filterCell is one filter's verdict on one node.
func filterCell(n *nodeReport, f verdictReport) template.HTML {
	class, mark := f.Verdict, map[string]string{"pass": "✓", "reject": "✗", "skip": "–", "error": "!"}[f.Verdict]
	if f.Verdict == "reject" && n.KubeScheduler != nil && n.KubeScheduler.Plugin == f.Plugin {
		class += " first"
	}
	return template.HTML(fmt.Sprintf(`<td class="%s" title="%s">%s</td>`, class, template.HTMLEscapeString(verdictTitle(&f)), mark))
}

// verdictTitle is the hover text of a verdict.
func verdictTitle(v *verdictReport) string {
	if v == nil {
		return "feasible"
	}
	parts := []string{v.Plugin + ": " + v.Verdict}
	if len(v.Reasons) > 0 {
		parts = append(parts, strings.Join(v.Reasons, ", "))
	}
	parts = append(parts, v.Details...)
	return strings.Join(parts, "\n")
}

// scoreStyle shades a cell by a normalized score, 0 to 100.
func scoreStyle(normalized int64) template.CSS {
	light := 97 - normalized*45/100
	return template.CSS(fmt.Sprintf("background: hsl(120, 45%%, %d%%)", light))
}

func scoreTitle(s scoreReport, weight int32) string {
	return fmt.Sprintf("%s: raw %d, normalized %d, × weight %d = %d", s.Plugin, s.Raw, s.Normalized, weight, s.Weighted)
}
