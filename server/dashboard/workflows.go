package dashboard

import (
	"cmp"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/skiplock/skiplock"
)

const maxWorkflowJobs = 10000

type workflowsData struct {
	Recent []string
}

// workflows lists the workflows of the newest jobs and looks one up by id.
func (d *Dashboard) workflows(w http.ResponseWriter, r *http.Request, v *view) error {
	if id := strings.TrimSpace(r.URL.Query().Get("id")); id != "" {
		http.Redirect(w, r, "/workflows/"+url.PathEscape(id), http.StatusSeeOther)
		return nil
	}
	rows, err := d.client.JobList(r.Context(), skiplock.JobListParams{Tenant: v.P.tenantFilter(nil), Limit: 1000})
	if err != nil {
		return err
	}
	data := &workflowsData{}
	seen := map[string]bool{}
	for _, j := range rows {
		if j.WorkflowID != "" && !seen[j.WorkflowID] && len(data.Recent) < 50 {
			seen[j.WorkflowID] = true
			data.Recent = append(data.Recent, j.WorkflowID)
		}
	}
	v.Page, v.Title, v.Data = "workflows", "Workflows", data
	d.render(w, "workflows", v)
	return nil
}

type workflowData struct {
	View  *skiplock.WorkflowView
	Graph template.HTML
}

// workflow draws a workflow's jobs as a graph of their dependencies, each
// coloured by state, with its stages below.
func (d *Dashboard) workflow(w http.ResponseWriter, r *http.Request, v *view) error {
	id := r.PathValue("id")
	var jobs []*skiplock.JobRow
	lp := skiplock.JobListParams{WorkflowID: id, Tenant: v.P.tenantFilter(nil), Limit: 1000}
	for len(jobs) < maxWorkflowJobs {
		page, err := d.client.JobList(r.Context(), lp)
		if err != nil {
			return err
		}
		jobs = append(jobs, page...)
		if len(page) < lp.Limit {
			break
		}
		lp.BeforeID = page[len(page)-1].ID
	}
	if len(jobs) == 0 {
		return &pageError{status: http.StatusNotFound, msg: fmt.Sprintf("workflow %q: no jobs", id)}
	}
	slices.SortFunc(jobs, func(a, b *skiplock.JobRow) int { return cmp.Compare(a.ID, b.ID) })
	v.Page, v.Title = "workflows", "Workflow "+id
	v.Data = &workflowData{View: skiplock.NewWorkflowView(id, jobs), Graph: dagSVG(jobs)}
	d.render(w, "workflow", v)
	return nil
}

// Graph geometry.
const (
	nodeW, nodeH = 168.0, 44.0
	colGap       = 56.0
	rowGap       = 14.0
	maxDrawn     = 400
)

// dagSVG lays the jobs out in columns by depth (a job sits right of all
// its parents) and draws an edge from each parent to its child. Text from
// the jobs is escaped.
func dagSVG(jobs []*skiplock.JobRow) template.HTML {
	if len(jobs) > maxDrawn {
		jobs = jobs[:maxDrawn]
	}
	byID := map[int64]*skiplock.JobRow{}
	for _, j := range jobs {
		byID[j.ID] = j
	}
	depth := map[int64]int{}
	// Jobs come oldest first and a parent is older than its child, so one
	// pass settles every depth.
	for _, j := range jobs {
		for _, p := range j.DependsOn {
			if _, ok := byID[p]; ok {
				depth[j.ID] = max(depth[j.ID], depth[p]+1)
			}
		}
	}
	rows := map[int]int{}
	pos := map[int64][2]float64{}
	maxRow, maxCol := 0, 0
	for _, j := range jobs {
		c := depth[j.ID]
		pos[j.ID] = [2]float64{float64(c) * (nodeW + colGap), float64(rows[c]) * (nodeH + rowGap)}
		rows[c]++
		maxRow, maxCol = max(maxRow, rows[c]), max(maxCol, c)
	}
	width := float64(maxCol+1)*(nodeW+colGap) - colGap + 2
	height := float64(maxRow)*(nodeH+rowGap) - rowGap + 2
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="dag" viewBox="-1 -1 %g %g" width="%g" role="img" aria-label="workflow graph">`, width, height, width)
	for _, j := range jobs {
		for _, p := range j.DependsOn {
			from, ok := pos[p]
			if !ok {
				continue
			}
			to := pos[j.ID]
			x1, y1 := from[0]+nodeW, from[1]+nodeH/2
			x2, y2 := to[0], to[1]+nodeH/2
			fmt.Fprintf(&sb, `<path class="edge" d="M%g %g C%g %g %g %g %g %g"/>`, x1, y1, x1+colGap/2, y1, x2-colGap/2, y2, x2, y2)
		}
	}
	for _, j := range jobs {
		p := pos[j.ID]
		label := j.Kind
		if j.Stage != "" {
			label = j.Stage
		}
		if r := []rune(label); len(r) > 22 {
			label = string(r[:21]) + "…"
		}
		fmt.Fprintf(&sb, `<a href="/jobs/%d"><g class="node st-%s" transform="translate(%g %g)">`, j.ID, j.State, p[0], p[1])
		fmt.Fprintf(&sb, `<rect width="%g" height="%g" rx="6"/>`, nodeW, nodeH)
		fmt.Fprintf(&sb, `<text x="10" y="18">%s</text>`, template.HTMLEscapeString(label))
		fmt.Fprintf(&sb, `<text class="sub" x="10" y="35">#%d · %s</text></g></a>`, j.ID, j.State)
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String())
}
