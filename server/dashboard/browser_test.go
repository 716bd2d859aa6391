package dashboard_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/testwait"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// chromium answers the browser to drive, or skips the test saying how to
// get one (scripts/test installs Debian's chromium package when missing).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SKIPLOCK_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on this machine: the browser tests need it (scripts/test installs Debian's chromium package as root; or set SKIPLOCK_CHROMIUM)")
	return ""
}

// browser is one headless Chromium with a fresh profile; every dialog
// (a confirmation) is accepted.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
	shot string
}

// startChromium starts one headless Chromium for the test; each browser
// then opens in a BrowserContext of its own (its own cookies).
func startChromium(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)), chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.NoDefaultBrowserCheck, chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	start := time.Now()
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	t.Logf("chromium started in %s", time.Since(start).Round(time.Millisecond))
	return ctx
}

// newBrowser opens a tab with fresh cookies on base; every dialog (a
// confirmation) is accepted.
func newBrowser(t *testing.T, chrome context.Context, base, shotDir string) *browser {
	t.Helper()
	ctx, cancel := chromedp.NewContext(chrome, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return &browser{t: t, ctx: ctx, base: base, shot: shotDir}
}

// do runs steps with a deadline, failing the test with the step that broke
// and the page it was on.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	start := time.Now()
	defer func() {
		if d := time.Since(start); d > 2*time.Second {
			b.t.Logf("%s took %s", what, d.Round(time.Millisecond))
		}
	}()
	if err := chromedp.Do(ctx, steps...); err != nil {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		url, _ := chromedp.Run(ctx, chromedp.Location())
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
		b.t.Fatalf("%s: %v (at %s: %.600s)", what, err, url, body)
	}
}

func (b *browser) open(path string) chromedp.Action[chromedp.Void] {
	return chromedp.Navigate(b.base + path)
}

// eval answers a script's value.
func eval[T any](b *browser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitText waits until the element sel's text contains want; the page may
// navigate meanwhile (a form posted, a live reload).
func (b *browser) waitText(sel, want string) {
	b.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, sel, want)
	testwait.Until(b.t, time.Minute, fmt.Sprintf("%s to say %q", sel, want), func() bool {
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
		defer cancel()
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		return err == nil && ok
	})
}

// has answers whether the page has an element matching sel.
func (b *browser) has(sel string) bool {
	return eval[bool](b, fmt.Sprintf(`document.querySelector(%q) !== null`, sel))
}

// screenshot saves the page as name.png when screenshots are asked for
// (SKIPLOCK_SCREENSHOTS=dir).
func (b *browser) screenshot(name string) {
	b.t.Helper()
	if b.shot == "" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.shot, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// login logs in through the login page the dashboard sends to.
func (b *browser) login(token string) {
	b.t.Helper()
	b.do("log in", b.open("/jobs"), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("role")))
}

// post submits a form by script with the page's CSRF token, as a forged
// button would, and answers the status.
func (b *browser) post(path string) int {
	b.t.Helper()
	return eval[int](b, fmt.Sprintf(`fetch(%q, {method: "POST", redirect: "manual",
		body: new URLSearchParams({csrf: document.querySelector("meta[name=csrf]").content})}).then(r => r.status)`, path))
}

func shotDir(t *testing.T, db string) string {
	dir := os.Getenv("SKIPLOCK_SCREENSHOTS")
	if dir == "" {
		return ""
	}
	dir = filepath.Join(dir, db)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
