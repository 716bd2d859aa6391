package dashboard

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
)

// sessionCookie holds the token a browser logged in with. It is HttpOnly
// (no script reads it), SameSite=Strict (no other site sends it) and never
// appears in a URL.
const sessionCookie = "skiplock_session"

// viewFor authenticates r by its cookie; without a valid one it sends the
// browser to the login page (an event stream answers 401) and answers false.
func (d *Dashboard) viewFor(w http.ResponseWriter, r *http.Request) (*view, bool) {
	secret := ""
	if c, err := r.Cookie(sessionCookie); err == nil {
		secret = c.Value
	}
	p, err := d.backend.Authenticate(r.Context(), secret)
	if errors.Is(err, ErrUnauthenticated) {
		if r.Method == http.MethodGet && r.URL.Path != "/ui/events" {
			http.Redirect(w, r, "/login?next="+safeNext(r.URL.RequestURI()), http.StatusSeeOther)
		} else {
			http.Error(w, "log in first", http.StatusUnauthorized)
		}
		return nil, false
	}
	if err != nil {
		d.log.Error("dashboard: authenticate", "error", err)
		http.Error(w, "cannot check the token: the database does not answer", http.StatusServiceUnavailable)
		return nil, false
	}
	return &view{P: p, CSRF: d.csrfToken(secret), r: r}, true
}

// csrfToken is what every form carries: an HMAC of the session's secret,
// which another site can neither read nor compute.
func (d *Dashboard) csrfToken(secret string) string {
	key := d.openKey
	if secret != "" {
		key = []byte(secret)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("skiplock dashboard csrf"))
	return hex.EncodeToString(m.Sum(nil))
}

func validCSRF(got, want string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// safeNext keeps a redirect target on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}

type loginData struct {
	Next  string
	Error string
}

func (d *Dashboard) loginPage(w http.ResponseWriter, r *http.Request) {
	v := &view{P: &Principal{}, Page: "login", Title: "Log in",
		Data: loginData{Next: safeNext(r.URL.Query().Get("next"))}, r: r}
	d.render(w, "login", v)
}

// login checks the token typed in and keeps it in the session cookie.
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	secret := strings.TrimSpace(r.PostFormValue("token"))
	next := safeNext(r.PostFormValue("next"))
	_, err := d.backend.Authenticate(r.Context(), secret)
	if secret == "" || err != nil {
		msg := "that token is not known to this server"
		if secret == "" {
			msg = "paste a token (skiplock token create prints one)"
		} else if !errors.Is(err, ErrUnauthenticated) {
			msg = "cannot check the token: the database does not answer"
			d.log.Error("dashboard: login", "error", err)
		}
		w.WriteHeader(http.StatusUnauthorized)
		d.render(w, "login", &view{P: &Principal{}, Page: "login", Title: "Log in",
			Data: loginData{Next: next, Error: msg}, r: r})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: secret, Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: 7 * 24 * 3600})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
