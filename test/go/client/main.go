// A mesh module's view of mesh-provisioner, written as a Go module would be: it asks the verb with a
// plain struct marshalled without omitempty (every field sent, zero values included), decodes each
// answer strictly into typed structs (uint64 revisions, time.Time for updated, the cut object), and
// runs discovery (PING, INFO, STATS) on the micro package's control subjects. Any refusal, type
// mismatch or unknown field ends it non-zero with one line saying what; test/go-client.test.ts
// builds and runs it against a real nats-server and the service.
//
// Settings (environment): NATS_URL; NATS_USER, NATS_PASSWORD and NATS_INBOX_PREFIX for the verb (a
// node's client); NATS_ADMIN_USER and NATS_ADMIN_PASSWORD for discovery ($SRV is an operator's).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

const subject = "mesh-provisioner.provisioning"

// Request is the verb's request as a Go module writes it: no omitempty, so every field is sent.
type Request struct {
	What        string `json:"what"`
	Node        string `json:"node"`
	Module      string `json:"module"`
	Contributor string `json:"contributor"`
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	Collection  string `json:"collection"`
	After       string `json:"after"`
	Limit       int    `json:"limit"`
}

// Entry holds the fields of every bucket's entries; each answer fills those of its bucket.
type Entry struct {
	Key         string          `json:"key"`
	Node        string          `json:"node"`
	Module      string          `json:"module"`
	Kind        string          `json:"kind"`
	Name        string          `json:"name"`
	Collection  string          `json:"collection"`
	Contributor string          `json:"contributor"`
	Value       json.RawMessage `json:"value"`
	Raw         *string         `json:"raw"`
	RawBase64   *string         `json:"rawBase64"`
	Problem     *string         `json:"problem"`
	Revision    uint64          `json:"revision"`
	Updated     time.Time       `json:"updated"`
}

type OutOfShape struct {
	Key      string `json:"key"`
	Revision uint64 `json:"revision"`
	Reason   string `json:"reason"`
}

type Cut struct {
	Reason  string `json:"reason"`
	Omitted uint64 `json:"omitted"`
}

// Answer is the answer document of docs/verb.md (cursor and deleted belong to docs/following-changes.md's changes).
type Answer struct {
	What              string       `json:"what"`
	Bucket            string       `json:"bucket"`
	Revision          uint64       `json:"revision"`
	Total             uint64       `json:"total"`
	Stale             bool         `json:"stale"`
	Entries           []Entry      `json:"entries"`
	OutOfShape        []OutOfShape `json:"outOfShape"`
	OutOfShapeOmitted uint64       `json:"outOfShapeOmitted"`
	Next              *string      `json:"next"`
	Cut               *Cut         `json:"cut"`
	Cursor            string       `json:"cursor"`
	Deleted           []Entry      `json:"deleted"`
}

type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field"`
	} `json:"error"`
}

// The micro protocol v1 answers (the Debian micro package predates v1: its types are the older ones).
type Ping struct {
	Type     string            `json:"type"`
	Name     string            `json:"name"`
	ID       string            `json:"id"`
	Version  string            `json:"version"`
	Metadata map[string]string `json:"metadata"`
}

type EndpointInfo struct {
	Name       string            `json:"name"`
	Subject    string            `json:"subject"`
	QueueGroup string            `json:"queue_group"`
	Metadata   map[string]string `json:"metadata"`
}

type Info struct {
	Ping
	Description string         `json:"description"`
	Endpoints   []EndpointInfo `json:"endpoints"`
}

type EndpointStats struct {
	Name                  string          `json:"name"`
	Subject               string          `json:"subject"`
	QueueGroup            string          `json:"queue_group"`
	NumRequests           uint64          `json:"num_requests"`
	NumErrors             uint64          `json:"num_errors"`
	LastError             string          `json:"last_error"`
	ProcessingTime        time.Duration   `json:"processing_time"`
	AverageProcessingTime time.Duration   `json:"average_processing_time"`
	Data                  json.RawMessage `json:"data"`
}

type Stats struct {
	Ping
	Started   time.Time       `json:"started"`
	Endpoints []EndpointStats `json:"endpoints"`
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "go client: "+format+"\n", args...)
	os.Exit(1)
}

// strict decodes data into v, refusing unknown fields and anything after the document.
func strict(what string, data []byte, v interface{}) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		fail("%s: %v in %.300s", what, err, data)
	}
	if dec.More() {
		fail("%s: more than one JSON document", what)
	}
}

func ask(nc *nats.Conn, req Request) *nats.Msg {
	payload, err := json.Marshal(req)
	if err != nil {
		fail("marshal: %v", err)
	}
	msg, err := nc.Request(subject, payload, 5*time.Second)
	if err != nil {
		fail("asking %s: %v", payload, err)
	}
	return msg
}

func answer(nc *nats.Conn, req Request) Answer {
	msg := ask(nc, req)
	if code := msg.Header.Get("Nats-Service-Error-Code"); code != "" {
		fail("%+v was refused %s: %s", req, code, msg.Header.Get("Nats-Service-Error"))
	}
	var a Answer
	strict(fmt.Sprintf("answer to %+v", req), msg.Data, &a)
	for _, e := range a.Entries {
		if e.Revision == 0 || e.Updated.IsZero() || e.Key == "" {
			fail("an entry of %+v lacks its key, revision or time: %+v", req, e)
		}
	}
	return a
}

func connect(url, user, password string, opts ...nats.Option) *nats.Conn {
	nc, err := nats.Connect(url, append(opts, nats.UserInfo(user, password), nats.Name("go-client"))...)
	if err != nil {
		fail("connecting as %s: %v", user, err)
	}
	return nc
}

func discover(nc *nats.Conn, verb micro.Verb, v interface{}) {
	subj, err := micro.ControlSubject(verb, "mesh-provisioner", "")
	if err != nil {
		fail("control subject: %v", err)
	}
	msg, err := nc.Request(subj, nil, 2*time.Second)
	if err != nil {
		fail("%s: %v", subj, err)
	}
	strict(subj, msg.Data, v)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-describe" {
		describe()
		return
	}
	url := os.Getenv("NATS_URL")
	node := connect(url, os.Getenv("NATS_USER"), os.Getenv("NATS_PASSWORD"), nats.CustomInboxPrefix(os.Getenv("NATS_INBOX_PREFIX")))
	defer node.Close()

	// The zero struct is the registry, every kind of it.
	registry := answer(node, Request{})
	if registry.What != "registry" || registry.Revision == 0 || len(registry.Entries) != 13 || registry.Cut != nil {
		fail("the zero request is not the whole registry: %+v", registry)
	}
	for _, e := range registry.Entries {
		var value struct {
			Kind   string `json:"kind"`
			Module string `json:"module"`
		}
		if err := json.Unmarshal(e.Value, &value); err != nil || value.Kind != e.Kind || value.Module == "" {
			fail("registry entry %s: value %s", e.Key, e.Value)
		}
	}

	needs := answer(node, Request{What: "needs", Node: "ace", Module: "gitea"})
	if needs.Total != 4 || len(needs.Entries) != 4 || needs.Entries[3].Name != "db-password" || needs.Entries[3].Kind != "secret" {
		fail("needs of ace/gitea: %+v", needs)
	}
	if len(needs.OutOfShape) != 1 || needs.OutOfShape[0].Revision == 0 {
		fail("needs of ace/gitea should say its out-of-shape key: %+v", needs.OutOfShape)
	}

	who := answer(node, Request{What: "needs", Name: "forge-account"})
	if len(who.Entries) == 0 {
		fail("nobody needs forge-account: %+v", who)
	}
	for _, e := range who.Entries {
		if e.Name != "forge-account" {
			fail("needs named forge-account holds %s", e.Key)
		}
	}

	page := answer(node, Request{What: "needs", Limit: 2})
	if page.Cut == nil || page.Cut.Reason != "limit" || page.Cut.Omitted == 0 || page.Next == nil || len(page.Entries) != 2 {
		fail("a limit of 2 is not cut with next: %+v", page)
	}
	more := answer(node, Request{What: "needs", After: *page.Next, Limit: 2})
	if len(more.Entries) != 2 || more.Entries[0].Key <= *page.Next {
		fail("after %s does not go on: %+v", *page.Next, more)
	}

	shell := answer(node, Request{What: "collect", Node: "ace", Collection: "shell:zsh:normal"})
	if len(shell.Entries) == 0 || shell.Entries[0].Collection != "shell:zsh:normal" || shell.Entries[0].Contributor == "" {
		fail("collect of shell:zsh:normal: %+v", shell)
	}

	refused := ask(node, Request{What: "applied", Kind: "secret"})
	if refused.Header.Get("Nats-Service-Error-Code") != "400" {
		fail("kind for applied should be refused 400, got %q", refused.Header.Get("Nats-Service-Error-Code"))
	}
	var body ErrorBody
	strict("the refusal", refused.Data, &body)
	if body.Error.Code != "BAD_REQUEST" || body.Error.Field != "kind" || body.Error.Message != refused.Header.Get("Nats-Service-Error") {
		fail("the refusal's body: %+v", body)
	}

	admin := connect(url, os.Getenv("NATS_ADMIN_USER"), os.Getenv("NATS_ADMIN_PASSWORD"))
	defer admin.Close()
	semver := regexp.MustCompile(`^\d+\.\d+\.\d+`)

	var ping Ping
	discover(admin, micro.PingVerb, &ping)
	if ping.Type != "io.nats.micro.v1.ping_response" || ping.Name != "mesh-provisioner" || !semver.MatchString(ping.Version) || ping.ID == "" {
		fail("PING: %+v", ping)
	}

	var info Info
	discover(admin, micro.InfoVerb, &info)
	if info.Type != "io.nats.micro.v1.info_response" || len(info.Endpoints) != 1 || info.Description == "" {
		fail("INFO: %+v", info)
	}
	endpoint := info.Endpoints[0]
	if endpoint.Name != "provisioning" || endpoint.Subject != subject || endpoint.QueueGroup != "mesh-provisioner" {
		fail("INFO endpoint: %+v", endpoint)
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal([]byte(endpoint.Metadata["request_schema"]), &schema); err != nil || schema.Properties["name"] == nil {
		fail("INFO request_schema: %v %.200s", err, endpoint.Metadata["request_schema"])
	}

	var stats Stats
	discover(admin, micro.StatsVerb, &stats)
	if stats.Type != "io.nats.micro.v1.stats_response" || stats.Started.IsZero() || len(stats.Endpoints) != 1 {
		fail("STATS: %+v", stats)
	}
	counted := stats.Endpoints[0]
	if counted.NumRequests < 7 || counted.NumErrors < 1 || !strings.Contains(counted.LastError, "kind does not narrow what=applied") {
		fail("STATS should count the requests and the refusal: %+v", counted)
	}

	fmt.Printf("go client: %d registry kinds, %d needs of ace/gitea, %d needing forge-account; STATS %d requests, %d errors\n",
		len(registry.Entries), needs.Total, len(who.Entries), counted.NumRequests, counted.NumErrors)
}
