package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/examples/internal/example"
)

// The job types of the original system with their payloads; their queues, retries,
// leases, schemas and uniqueness come from
// examples/contracts/video-pipeline.yaml.

// TranscodeArgs converts the original to HLS and a thumbnail.
type TranscodeArgs struct {
	VideoID        string `json:"video_id"`
	S3OriginalPath string `json:"s3_original_path"`
}

func (TranscodeArgs) Kind() string { return "transcode" }

// SampleArgs extracts deduplicated keyframes from the original.
type SampleArgs struct {
	VideoID         string  `json:"video_id"`
	S3OriginalPath  string  `json:"s3_original_path"`
	TargetFPS       float64 `json:"target_fps"`
	DedupeThreshold float64 `json:"dedupe_threshold"`
}

func (SampleArgs) Kind() string { return "sample" }

// OCRArgs reads the text on keyframes.
type OCRArgs struct {
	VideoID       string   `json:"video_id"`
	FramePaths    []string `json:"frame_paths"`
	Languages     []string `json:"languages"`
	MinConfidence float64  `json:"min_confidence"`
}

func (OCRArgs) Kind() string { return "ocr" }

// SegmentIndexArgs merges segments, extracts entities, marks the video ready.
type SegmentIndexArgs struct {
	VideoID string `json:"video_id"`
}

func (SegmentIndexArgs) Kind() string { return "segment_index" }

// ClipGenerateArgs cuts a clip on a user's request.
type ClipGenerateArgs struct {
	VideoID        string `json:"video_id"`
	ClipID         string `json:"clip_id"`
	TStart         int    `json:"t_start"`
	TEnd           int    `json:"t_end"`
	PaddingMS      int    `json:"padding_ms"`
	S3OriginalPath string `json:"s3_original_path"`
}

func (ClipGenerateArgs) Kind() string { return "clip_generate" }

// pipeline holds the workers; s3 stands for the bucket's objects.
type pipeline struct {
	mu sync.Mutex
	s3 map[string]bool
}

func (p *pipeline) register(ws *skiplock.Workers) {
	skiplock.MustAddWorker(ws, skiplock.WorkFunc[TranscodeArgs](p.transcode))
	skiplock.MustAddWorker(ws, skiplock.WorkFunc[SampleArgs](p.sample))
	skiplock.MustAddWorker(ws, skiplock.WorkFunc[OCRArgs](p.ocr))
	skiplock.MustAddWorker(ws, skiplock.WorkFunc[SegmentIndexArgs](p.segmentIndex))
	skiplock.MustAddWorker(ws, skiplock.WorkFunc[ClipGenerateArgs](p.clipGenerate))
}

func (p *pipeline) transcode(ctx context.Context, j *skiplock.Job[TranscodeArgs]) error {
	say(j.JobRow, "HLS at videos/proxy/%s/index.m3u8, poster at thumbs/%s/poster.jpg", j.Args.VideoID, j.Args.VideoID)
	j.Next(SampleArgs{VideoID: j.Args.VideoID, S3OriginalPath: j.Args.S3OriginalPath, TargetFPS: 10, DedupeThreshold: 0.95},
		&skiplock.InsertOpts{Stage: "sample"})
	return nil
}

func (p *pipeline) sample(ctx context.Context, j *skiplock.Job[SampleArgs]) error {
	var frames []string
	for ms := 1500; ms <= 1700; ms += 100 {
		frames = append(frames, fmt.Sprintf("frames/%s/%d.jpg", j.Args.VideoID, ms))
	}
	say(j.JobRow, "%d unique keyframes at %g fps from the original", len(frames), j.Args.TargetFPS)
	j.Next(OCRArgs{VideoID: j.Args.VideoID, FramePaths: frames, Languages: []string{"eng"}, MinConfidence: 0.6},
		&skiplock.InsertOpts{Stage: "ocr"})
	return nil
}

func (p *pipeline) ocr(ctx context.Context, j *skiplock.Job[OCRArgs]) error {
	for i := range j.Args.FramePaths {
		if err := j.Progress(ctx, (i+1)*100/len(j.Args.FramePaths), fmt.Sprintf("frame %d of %d", i+1, len(j.Args.FramePaths))); err != nil {
			return err
		}
	}
	say(j.JobRow, "text of %d frames into segments", len(j.Args.FramePaths))
	j.Next(SegmentIndexArgs{VideoID: j.Args.VideoID}, &skiplock.InsertOpts{Stage: "segment_index"})
	return nil
}

func (p *pipeline) segmentIndex(ctx context.Context, j *skiplock.Job[SegmentIndexArgs]) error {
	say(j.JobRow, "segments merged, entities extracted, video ready")
	return j.SetResult(map[string]string{"video_status": "ready"})
}

// clipGenerate skips a clip that exists already, as the original's workers do
// for repeated API requests.
func (p *pipeline) clipGenerate(ctx context.Context, j *skiplock.Job[ClipGenerateArgs]) error {
	path := fmt.Sprintf("videos/clips/%s/%s.mp4", j.Args.VideoID, j.Args.ClipID)
	p.mu.Lock()
	exists := p.s3[path]
	p.s3[path] = true
	p.mu.Unlock()
	if exists {
		say(j.JobRow, "%s exists already: skipped", path)
		return j.SetResult(map[string]any{"path": path, "skipped": true})
	}
	say(j.JobRow, "%s (%d–%d ms)", path, max(0, j.Args.TStart-j.Args.PaddingMS), j.Args.TEnd+j.Args.PaddingMS)
	return j.SetResult(map[string]any{"path": path, "skipped": false})
}

func say(j *skiplock.JobRow, format string, args ...any) {
	example.Say("%s-worker: job %d: "+format, append([]any{j.Kind, j.ID}, args...)...)
}
