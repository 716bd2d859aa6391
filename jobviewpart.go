package skiplock

import (
	"fmt"
	"reflect"
	"time"
)

// JobEvent is a change of a job as the event stream carries it (`event:
// job` of GET /v1/events): the part of its JobView that changes as it runs
// and that subscribers filter on.
type JobEvent struct {
	ID              int64     `json:"id"`
	State           JobState  `json:"state"`
	Progress        int       `json:"progress"`
	ProgressMessage string    `json:"progress_message"`
	Kind            string    `json:"kind"`
	Queue           string    `json:"queue"`
	Tenant          string    `json:"tenant"`
	WorkflowID      *string   `json:"workflow_id"`
	Stage           *string   `json:"stage"`
	Attempt         int       `json:"attempt"`
	UpdatedAt       time.Time `json:"updated_at"`
}

// NewJobEvent answers the event of a change of row.
func NewJobEvent(row *JobRow) *JobEvent {
	e := jobEventPart.of(NewJobView(row))
	return &e
}

// The parts of the job view; each is checked when the package loads.
var (
	jobEventPart    = newViewPart[JobEvent]()
	workflowJobPart = newViewPart[WorkflowJob]()
)

// viewPart copies into P the fields of a JobView that P declares: a part
// of the job view names its fields and takes them from the one view, never
// converting a row itself. A field of P that JobView lacks must be tagged
// `view:"-"` (the caller fills it); any other field must be JobView's, of
// the same type and JSON name, or the package panics at load.
type viewPart[P any] struct {
	from, to []int
}

func newViewPart[P any]() viewPart[P] {
	var vp viewPart[P]
	pt, vt := reflect.TypeFor[P](), reflect.TypeFor[JobView]()
	for i := range pt.NumField() {
		f := pt.Field(i)
		if f.Tag.Get("view") == "-" {
			continue
		}
		vf, ok := vt.FieldByName(f.Name)
		if !ok || vf.Type != f.Type || vf.Tag.Get("json") != f.Tag.Get("json") || len(vf.Index) != 1 {
			panic(fmt.Sprintf("skiplock: %s.%s is not JobView's field of that type and JSON name", pt.Name(), f.Name))
		}
		vp.from, vp.to = append(vp.from, vf.Index[0]), append(vp.to, i)
	}
	return vp
}

// of answers P with its JobView fields taken from v.
func (vp viewPart[P]) of(v *JobView) P {
	var p P
	src, dst := reflect.ValueOf(v).Elem(), reflect.ValueOf(&p).Elem()
	for k, i := range vp.from {
		dst.Field(vp.to[k]).Set(src.Field(i))
	}
	return p
}
