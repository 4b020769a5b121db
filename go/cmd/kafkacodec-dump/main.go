// Command kafkacodec-dump reads files with the generated Go parsers and prints what each
// holds as a tree of its stored fields, for the cross-language tests (tests/crosslang):
//
//	kafkacodec-dump [-no-crc] JOBS
//	kafkacodec-dump -codecs < CASES
//
// JOBS has one line per input, CLASS<TAB>PARAM<TAB>OFFSET<TAB>PATH: the type (its Go name,
// or the Java binary name KafkaLog$Entry), its parameter or "-", and where in the file the
// value starts (it runs to the end). One JSON line per job: {"ok": TREE} or
// {"error": MESSAGE, "check": CHECK}. A tree has each stored field by its schema name,
// absent fields left out and bytes as {"hex": ...}. -no-crc reads without CRC checks.
//
// -codecs decompresses one payload per line of standard input, CODEC MAGIC HEX ("-" for
// no bytes), with kafkacodec.Decompress, and prints "=" and the bytes in hex, or
// "refused".
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/kafkacodec/kafkacodec/go/kafkacodec"
)

func main() {
	args := os.Args[1:]
	if len(args) == 1 && args[0] == "-codecs" {
		codecs()
		return
	}
	verify := true
	if len(args) == 2 && args[0] == "-no-crc" {
		verify, args = false, args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: kafkacodec-dump [-no-crc] JOBS | -codecs")
		os.Exit(2)
	}
	f, err := os.Open(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	scan := bufio.NewScanner(f)
	scan.Buffer(make([]byte, 1<<20), 1<<20)
	for scan.Scan() {
		if scan.Text() == "" {
			continue
		}
		line, err := json.Marshal(run(strings.Split(scan.Text(), "\t"), verify))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		out.Write(append(line, '\n'))
	}
}

func codecs() {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	scan := bufio.NewScanner(os.Stdin)
	scan.Buffer(make([]byte, 1<<22), 1<<22)
	for scan.Scan() {
		part := strings.Fields(scan.Text())
		if len(part) != 3 {
			continue
		}
		codec, _ := strconv.ParseInt(part[0], 10, 64)
		magic, _ := strconv.ParseInt(part[1], 10, 64)
		var data []byte
		if part[2] != "-" {
			data, _ = hex.DecodeString(part[2])
		}
		got, err := kafkacodec.Decompress(codec, magic, data)
		if err != nil {
			fmt.Fprintln(out, "refused")
		} else {
			fmt.Fprintln(out, "="+hex.EncodeToString(got))
		}
	}
}

func run(job []string, verify bool) map[string]any {
	name := strings.ReplaceAll(job[0], "$", "")
	p, ok := kafkacodec.Parsers[name]
	if !ok {
		return map[string]any{"error": "no parser named " + name, "check": "usage"}
	}
	var params []int64
	if job[1] != "-" {
		v, _ := strconv.ParseInt(job[1], 10, 64)
		params = append(params, v)
	}
	if len(params) != p.Params {
		return map[string]any{"error": fmt.Sprintf("%s takes %d params", name, p.Params), "check": "usage"}
	}
	offset, _ := strconv.Atoi(job[2])
	data, err := os.ReadFile(job[3])
	if err != nil {
		return map[string]any{"error": err.Error(), "check": "usage"}
	}
	v, err := p.Parse(data[offset:], params, verify)
	if err != nil {
		var e *kafkacodec.Error
		if errors.As(err, &e) {
			return map[string]any{"error": e.Error(), "check": string(e.Check)}
		}
		return map[string]any{"error": err.Error(), "check": "other"}
	}
	return map[string]any{"ok": tree(reflect.ValueOf(v))}
}

// tree: a parsed value as the tests' JSON: structs by their ksy tags (positional
// instances and bookkeeping left out), nil for absent, bytes as {"hex": ...}.
func tree(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return tree(v.Elem())
	case reflect.Struct:
		out := map[string]any{}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			tag := t.Field(i).Tag.Get("ksy")
			if tag == "" || tag == "-" || strings.HasSuffix(tag, ",pos") {
				continue
			}
			if value := tree(v.Field(i)); value != nil {
				out[tag] = value
			}
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return map[string]string{"hex": hex.EncodeToString(v.Bytes())}
		}
		items := make([]any, v.Len())
		for i := range items {
			items[i] = tree(v.Index(i))
		}
		return items
	default:
		return v.Interface()
	}
}
