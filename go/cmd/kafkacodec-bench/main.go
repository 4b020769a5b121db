// Command kafkacodec-bench times the generated Go parser against franz-go's record decoding
// over the same log segment, for bench/languages.py:
//
//	kafkacodec-bench [-repeat N] SEGMENT
//
// Each side checks every batch's CRC and reads every field of every record (offset,
// timestamp, key, value, headers), summed into a checksum that must agree:
//   - kafkacodec: ParseKafkaLog(data, verify=true), then a walk of the batches;
//   - franz-go: kgo.ProcessFetchPartition (its consumer's path for a fetched partition),
//     CRC validation on, then a walk of the records.
//
// The sides run alternately; the output is one JSON object with each side's median
// records per second, the records and the checksum.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/kafkacodec/kafkacodec/go/kafkacodec"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func viaKafkacodec(data []byte) (records int, sum int64, err error) {
	log, err := kafkacodec.ParseKafkaLog(data, true)
	if err != nil {
		return 0, 0, err
	}
	for _, e := range log.Entries {
		b, ok := e.Body.(*kafkacodec.KafkaRecordBatch)
		if !ok {
			continue
		}
		recs := b.RecordsRegion.Records
		logAppend := b.TimestampType() == 1
		for i := range recs {
			r := &recs[i]
			ts := b.BaseTimestamp + r.TimestampDelta
			if logAppend {
				ts = b.MaxTimestamp
			}
			sum += b.BaseOffset + r.OffsetDelta + ts + int64(len(r.Key)+len(r.Value))
			for _, h := range r.Headers {
				sum += int64(len(h.Key) + len(h.Value))
			}
			records++
		}
	}
	return records, sum, nil
}

var decompressor = kgo.DefaultDecompressor()

func viaFranz(data []byte) (records int, sum int64, err error) {
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.RecordBatches = data
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{KeepControlRecords: true}, &rp, decompressor, nil)
	if fp.Err != nil {
		return 0, 0, fp.Err
	}
	for _, r := range fp.Records {
		sum += r.Offset + r.Timestamp.UnixMilli() + int64(len(r.Key)+len(r.Value))
		for _, h := range r.Headers {
			sum += int64(len(h.Key) + len(h.Value))
		}
		records++
	}
	return len(fp.Records), sum, nil
}

func main() {
	repeat := flag.Int("repeat", 5, "timed runs of each side")
	profile := flag.String("cpuprofile", "", "write kafkacodec's CPU profile here (then only it runs)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: kafkacodec-bench [-repeat N] SEGMENT")
		os.Exit(2)
	}
	data, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		pprof.StartCPUProfile(f)
		for i := 0; i < 10*(*repeat); i++ {
			viaKafkacodec(data)
		}
		pprof.StopCPUProfile()
		return
	}
	sides := []struct {
		name string
		run  func([]byte) (int, int64, error)
	}{{"kafkacodec", viaKafkacodec}, {"franz-go", viaFranz}}
	times := map[string][]float64{}
	counts := map[string]int{}
	sums := map[string]int64{}
	for i := 0; i <= *repeat; i++ { // the first round warms up
		for j := range sides {
			side := sides[(i+j)%len(sides)]
			start := time.Now()
			n, sum, err := side.run(data)
			elapsed := time.Since(start).Seconds()
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", side.name, err)
				os.Exit(1)
			}
			counts[side.name], sums[side.name] = n, sum
			if i > 0 {
				times[side.name] = append(times[side.name], elapsed)
			}
		}
	}
	if counts["kafkacodec"] != counts["franz-go"] || sums["kafkacodec"] != sums["franz-go"] {
		fmt.Fprintf(os.Stderr, "the sides disagree: %v %v\n", counts, sums)
		os.Exit(1)
	}
	out := map[string]any{"records": counts["kafkacodec"], "bytes": len(data), "checksum": sums["kafkacodec"]}
	for name, ts := range times {
		sort.Float64s(ts)
		out[name] = float64(counts[name]) / ts[len(ts)/2]
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
