// Package dashboard is Skiplock's web UI, served by `skiplock serve` at /
// on the API's port: an overview of the queues, the jobs with filters and
// live updates, a job's detail, workflows drawn as graphs, dead letters,
// schedules, and queue controls. It reads and acts only through the
// skiplock.Client calls the HTTP API uses; its templates and assets are
// embedded, and every page is rendered with html/template.
//
// A browser logs in with an API token, kept in an HttpOnly cookie; the
// token's role decides what the pages offer (viewer: look, admin: act) and
// a tenant-scoped token sees only its tenant. Every form carries a CSRF
// token derived from the session, and cross-origin posts are refused.
package dashboard
