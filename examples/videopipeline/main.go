// Command videopipeline rebuilds the video pipeline on Skiplock: the
// client enforces the original's typed job contracts; transcode → sample → ocr
// → segment_index are chained with job.Next in one workflow per video;
// "one active job per video and type" makes a duplicate enqueue return the
// live job; clip_generate jobs run on demand with no uniqueness.
//
//	go run ./examples/videopipeline [--database-url postgres://…] [--contracts FILE] [-v]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/examples/internal/example"
)

var contractFile = flag.String("contracts", "examples/contracts/video-pipeline.yaml", "the contract file")

const video = "a1b2c3d4-e5f6-7890-abcd-ef1234567890"

var original = "videos/original/" + video + "/master.mp4"

func main() { example.Run("videopipeline", run) }

func run(ctx context.Context, env example.Env) error {
	contracts, err := contract.Load(*contractFile)
	if err != nil {
		return err
	}
	p := &pipeline{s3: map[string]bool{}}
	workers := skiplock.NewWorkers()
	p.register(workers)
	queues := map[string]skiplock.QueueConfig{}
	for _, k := range []string{"transcode", "sample", "ocr", "segment_index", "clip_generate"} {
		queues[k] = skiplock.QueueConfig{MaxWorkers: 1} // one queue per type, each scales on its own
	}
	client, err := skiplock.NewClient(env.Driver, &skiplock.Config{Contracts: contracts, Workers: workers,
		Logger: env.Logger, Queues: queues})
	if err != nil {
		return err
	}
	if err := rejections(ctx, client); err != nil {
		return err
	}

	// The s3-cron-scanner sees a new upload, and sees it again on its next
	// scan before the transcode ran: the live job is returned.
	workflow := "video:" + video
	var first int64
	for scan := 1; scan <= 2; scan++ {
		res, err := client.Insert(ctx, TranscodeArgs{VideoID: video, S3OriginalPath: original},
			&skiplock.InsertOpts{WorkflowID: workflow, Stage: "transcode"})
		if err != nil {
			return err
		}
		j := res.Job
		example.Say("s3-cron-scanner scan %d: transcode job %d duplicate=%v (queue %s, max_retries %d, key %s)",
			scan, j.ID, res.Duplicate, j.Queue, j.MaxRetries, j.IdempotencyKey)
		if scan == 1 {
			first = j.ID
		} else if !res.Duplicate || j.ID != first {
			return errors.New("second transcode of a live video: want the live job")
		}
	}
	example.Say("one active job per video and type: ok")

	if err := client.Start(ctx); err != nil {
		return err
	}
	defer example.Stop(client)
	if err := clips(ctx, client); err != nil {
		return err
	}
	view, err := example.WaitWorkflow(ctx, client, workflow)
	if err != nil {
		return err
	}
	return printWorkflow(view)
}

// rejections: the contracts refuse unknown types and bad payloads,
// naming the field; nothing is stored.
func rejections(ctx context.Context, c *skiplock.Client) error {
	bad := []struct {
		args  skiplock.JobArgs
		field string
	}{
		{TranscodeArgs{VideoID: "not-a-uuid", S3OriginalPath: original}, "payload.video_id"},
		{TranscodeArgs{VideoID: video, S3OriginalPath: "videos/proxy/x.mp4"}, "payload.s3_original_path"},
		{SampleArgs{VideoID: video, S3OriginalPath: original, TargetFPS: 10, DedupeThreshold: 1.5}, "payload.dedupe_threshold"},
		{skiplock.RawArgs{KindName: "thumbnail", Payload: []byte(`{}`)}, "kind"},
	}
	for _, b := range bad {
		_, err := c.Insert(ctx, b.args, nil)
		var ve *contract.ValidationError
		if !errors.As(err, &ve) || ve.Field != b.field {
			return fmt.Errorf("%s: want rejected on %s, got %v", b.args.Kind(), b.field, err)
		}
		example.Say("rejected %s: %v", b.args.Kind(), err)
	}
	return nil
}

// clips: the api-gateway asks for two clips, and for the first one again.
// All three are enqueued; the repeat finds its clip in S3 and skips.
func clips(ctx context.Context, c *skiplock.Client) error {
	var ids []int64
	for _, r := range []struct {
		id         string
		start, end int
	}{{"clip-1", 1500, 3000}, {"clip-2", 9000, 12000}, {"clip-1", 1500, 3000}} {
		res, err := c.Insert(ctx, ClipGenerateArgs{VideoID: video, ClipID: r.id, TStart: r.start, TEnd: r.end,
			PaddingMS: 2000, S3OriginalPath: original}, nil)
		if err != nil {
			return err
		}
		if res.Duplicate {
			return errors.New("clip_generate: want no uniqueness")
		}
		example.Say("api-gateway: clip %s → job %d (queued)", r.id, res.Job.ID)
		ids = append(ids, res.Job.ID)
	}
	skipped := 0
	for _, id := range ids {
		j, err := example.WaitFinished(ctx, c, id)
		if err != nil {
			return err
		}
		if skippedClip(j) {
			skipped++
		}
	}
	if skipped != 1 {
		return fmt.Errorf("clips: want one repeated request skipped, got %d", skipped)
	}
	example.Say("clip_generate: 3 jobs, no uniqueness; the repeat skipped its existing clip: ok")
	return nil
}

// skippedClip reports whether a clip job found its clip already there.
func skippedClip(j *skiplock.JobRow) bool {
	var r struct {
		Skipped bool `json:"skipped"`
	}
	return j.State == skiplock.StateCompleted && json.Unmarshal(j.Result, &r) == nil && r.Skipped
}

func printWorkflow(v *skiplock.WorkflowView) error {
	example.Say("workflow %s: %s", v.ID, v.Status)
	var stages []string
	for _, s := range v.Stages {
		for _, j := range s.Jobs {
			example.Say("  %-14s job %-3d %-10s attempt %d of %d, progress %3d%% %s", s.Name, j.ID, j.State,
				j.Attempt, j.MaxRetries+1, j.Progress, j.ProgressMessage)
		}
		stages = append(stages, s.Name)
	}
	if v.Status != skiplock.WorkflowCompleted || fmt.Sprint(stages) != "[transcode sample ocr segment_index]" {
		return fmt.Errorf("workflow: want the four stages completed in order, got %s %v", v.Status, stages)
	}
	return nil
}
