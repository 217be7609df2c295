package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"html/template"
	"net/http"
	"strings"
)

// The monitor page in a browser: with tokens on, a browser cannot send the
// Authorization header, so the page answers a login form instead. Posting
// a valid token to /login sets a session cookie that opens the monitor
// page (and nothing else: the API stays Bearer-only). The cookie holds an
// HMAC of the token under a key drawn when the server starts, so it reveals
// nothing of the token, is checked in constant time, and ends with the
// process; it is HttpOnly and SameSite=Strict, so scripts cannot read it
// and other sites cannot send it.

// sessionCookie names the monitor page's session cookie.
const sessionCookie = "idsql_session"

// maxLoginBody bounds the body of a login form.
const maxLoginBody = 4 << 10

// newSessions returns one session value per token hash under a fresh
// random key.
func newSessions(tokens [][sha256.Size]byte) [][sha256.Size]byte {
	key := make([]byte, 32)
	rand.Read(key) // never fails (crypto/rand's documented behavior since Go 1.24)
	out := make([][sha256.Size]byte, len(tokens))
	for i, t := range tokens {
		mac := hmac.New(sha256.New, key)
		mac.Write(t[:])
		copy(out[i][:], mac.Sum(nil))
	}
	return out
}

// tokenMatches reports whether tok is one of the configured tokens,
// comparing every one in constant time whatever matches, and which.
func (srv *Server) tokenMatches(tok string) (int, bool) {
	sum := sha256.Sum256([]byte(tok))
	return matchAny(sum[:], srv.tokens)
}

// matchAny compares v with every element of set in constant time and
// returns the index of the match.
func matchAny(v []byte, set [][sha256.Size]byte) (int, bool) {
	found, at := 0, 0
	for i := range set {
		eq := subtle.ConstantTimeCompare(v, set[i][:])
		at = subtle.ConstantTimeSelect(eq, i, at)
		found |= eq
	}
	return at, found == 1
}

// hasSession reports whether r carries a valid session cookie.
func (srv *Server) hasSession(r *http.Request) bool {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return false
	}
	v, err := hex.DecodeString(c.Value)
	if err != nil || len(v) != sha256.Size {
		return false
	}
	_, ok := matchAny(v, srv.sessions)
	return ok
}

// serveLogin answers /login (the form, and the token posted from it) and
// /logout (which clears the cookie).
func (srv *Server) serveLogin(w http.ResponseWriter, r *http.Request) int {
	if r.URL.Path == "/logout" {
		if r.Method != http.MethodPost {
			return srv.methodNotAllowed(w, r, "POST")
		}
		http.SetCookie(w, srv.cookie(r, "", -1))
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return http.StatusSeeOther
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return srv.loginForm(w, http.StatusOK, "")
	case http.MethodPost:
	default:
		return srv.methodNotAllowed(w, r, "GET, HEAD, POST")
	}
	if len(srv.tokens) == 0 {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return http.StatusSeeOther
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginBody)
	if err := r.ParseForm(); err != nil {
		return srv.loginForm(w, http.StatusBadRequest, "The form could not be read.")
	}
	i, ok := srv.tokenMatches(strings.TrimSpace(r.PostForm.Get("token")))
	if !ok {
		srv.m.errors[errUnauthorized].Add(1)
		return srv.loginForm(w, http.StatusUnauthorized, "That is not one of the server's tokens.")
	}
	http.SetCookie(w, srv.cookie(r, hex.EncodeToString(srv.sessions[i][:]), 0))
	http.Redirect(w, r, "/", http.StatusSeeOther)
	return http.StatusSeeOther
}

// cookie returns the session cookie with value (maxAge -1 deletes it).
func (srv *Server) cookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: sessionCookie, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil}
}

// loginForm writes the login page with status and an optional problem.
func (srv *Server) loginForm(w http.ResponseWriter, status int, problem string) int {
	h := w.Header()
	h["Content-Type"] = []string{"text/html; charset=utf-8"}
	h["Cache-Control"] = noStore
	h["X-Content-Type-Options"] = noSniff
	h["Content-Security-Policy"] = []string{"default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"}
	if status == http.StatusUnauthorized {
		h["Www-Authenticate"] = []string{`Bearer realm="idsql"`}
	}
	w.WriteHeader(status)
	loginTmpl.Execute(w, struct{ Namespace, Problem string }{srv.cfg.Namespace, problem})
	return status
}

var loginTmpl = template.Must(template.New("login").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>idsql ID server — {{.Namespace}} — log in</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1d2330; }
form { max-width: 360px; margin: 80px auto; background: #fff; border: 1px solid #dde1e8; border-radius: 6px; padding: 20px 24px; }
h1 { font-size: 18px; margin: 0 0 12px; }
input { width: 100%; box-sizing: border-box; padding: 6px 8px; margin: 6px 0 12px; font: inherit; }
.bad { color: #b42318; font-weight: 600; }
</style>
</head>
<body>
<form id="login" method="post" action="/login">
<h1>idsql ID server — {{.Namespace}}</h1>
{{if .Problem}}<p class="bad" id="problem">{{.Problem}}</p>{{end}}
<label for="token">This server needs one of its API tokens (idsql serve --token) to show its monitor page.</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Log in</button>
</form>
</body>
</html>
`))
