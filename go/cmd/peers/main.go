// Command peers reads Kafka log images with the record decoders of Go's Kafka clients, as
// each client's consumer reads a fetched record set, and prints what each returned, for
// kafkacodec's peers report (python -m peers).
//
// Usage: peers FILE...  (or the files one per line on standard input with "-")
//
// One JSON line per file and parser, printed as soon as it is known:
//
//	{"file": F, "parser": P, "records": [...], "error": "..."}   what the decoder returned
//	{"file": F, "parser": P, "panic": "..."}                      the decoder panicked
//	{"file": F, "parser": P, "hang": true}                        no answer within -timeout
//
// A record is {"offset", "timestamp" (ms; null when the format has none), "key", "value"
// (hex; null for null), "headers": [[key, hex value or null]], "control": bool}.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"time"
)

// Record is one record as a parser returned it, in the report's shape.
type Record struct {
	Offset    int64        `json:"offset"`
	Timestamp *int64       `json:"timestamp"`
	Key       *string      `json:"key"`
	Value     *string      `json:"value"`
	Headers   [][2]*string `json:"headers"`
	Control   bool         `json:"control"`
}

// Result is what one parser made of one file.
type Result struct {
	File    string   `json:"file"`
	Parser  string   `json:"parser"`
	Records []Record `json:"records"`
	Error   *string  `json:"error,omitempty"`
	Panic   *string  `json:"panic,omitempty"`
	Hang    bool     `json:"hang,omitempty"`
}

type parser struct {
	name string
	read func(data []byte) ([]Record, error)
}

var parsers = []parser{
	{"franz-go", franz},
	{"sarama", saramaFetch},
	{"kafka-go", kafkaGo},
	{"kafkacodec-go", kafkacodecGo},
}

func main() {
	timeout := flag.Duration("timeout", 10*time.Second, "how long a parser may take over one file")
	only := flag.String("parser", "", "run only this parser")
	flag.Parse()
	files := flag.Args()
	out := json.NewEncoder(os.Stdout)
	if len(files) == 1 && files[0] == "-" {
		// each name answered as soon as it is read: a caller may keep one process and
		// send it one case at a time (peers.Session, the fuzz run's minimizer)
		scan := bufio.NewScanner(os.Stdin)
		for scan.Scan() {
			if scan.Text() != "" {
				answer(scan.Text(), *only, *timeout, out)
			}
		}
		return
	}
	for _, f := range files {
		answer(f, *only, *timeout, out)
	}
}

// answer prints each parser's reading of one file, a JSON line each.
func answer(f, only string, timeout time.Duration, out *json.Encoder) {
	data, err := os.ReadFile(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, p := range parsers {
		if only != "" && p.name != only {
			continue
		}
		r := run(p, data, timeout)
		r.File, r.Parser = f, p.name
		if err := out.Encode(r); err != nil {
			os.Exit(2)
		}
	}
}

// run calls the parser on its own goroutine: a panic is recovered and reported, a parser
// that does not return in time is reported as hung (and left running).
func run(p parser, data []byte, timeout time.Duration) Result {
	done := make(chan Result, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				msg := fmt.Sprintf("%v\n%s", v, debug.Stack())
				done <- Result{Panic: &msg}
			}
		}()
		recs, err := p.read(append([]byte(nil), data...))
		r := Result{Records: recs}
		if err != nil {
			msg := err.Error()
			r.Error = &msg
		}
		done <- r
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(timeout):
		return Result{Hang: true}
	}
}

func hexOf(b []byte) *string {
	if b == nil {
		return nil
	}
	s := fmt.Sprintf("%x", b)
	return &s
}

func millis(t time.Time) *int64 {
	ms := t.UnixMilli()
	return &ms
}
