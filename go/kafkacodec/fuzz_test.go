package kafkacodec_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kafkacodec/kafkacodec/go/kafkacodec"
)

// FuzzParseKafkaLog is Go's own coverage-guided fuzzer over the package's log parser: a
// parse never panics, whatever the bytes, with CRC checks or without, and an error says
// where. Its seeds: the shared vectors, and the schema-aware mutations of peers.mutate when
// KAFKACODEC_SEEDS names a directory of them (docs/fuzz-your-parser.md):
//
//	python -m peers.mutate --cases 20000 --seed 1 --out /tmp/seeds
//	KAFKACODEC_SEEDS=/tmp/seeds go test -run '^$' -fuzz FuzzParseKafkaLog -fuzztime 5m ./kafkacodec
//
// As a plain test (go test), the seeds alone are read.
func FuzzParseKafkaLog(f *testing.F) {
	var files []string
	for _, pattern := range []string{"../../tests/vectors/*/*/*.bin", "../../tests/vectors/*/*.bin"} {
		found, _ := filepath.Glob(pattern)
		files = append(files, found...)
	}
	if dir := os.Getenv("KAFKACODEC_SEEDS"); dir != "" {
		found, err := filepath.Glob(filepath.Join(dir, "*.bin"))
		if err != nil || len(found) == 0 {
			f.Fatalf("KAFKACODEC_SEEDS=%s: no .bin files", dir)
		}
		files = append(files, found...)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) <= 1<<20 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, verify := range []bool{true, false} {
			log, err := kafkacodec.ParseKafkaLog(data, verify)
			if err != nil {
				if err.Error() == "" {
					t.Fatalf("an error that says nothing (verify %v)", verify)
				}
				continue
			}
			if log == nil {
				t.Fatalf("no log and no error (verify %v)", verify)
			}
		}
	})
}
