package main

import (
	"errors"
	"fmt"

	"github.com/kafkacodec/kafkacodec/go/kafkacodec"
)

// kafkacodecGo reads the bytes with the Go package the schemas generate (go/kafkacodec:
// ParseKafkaLog, every CRC checked, every region decompressed), and makes its records as
// kafkacodec's record layer does (kafkacodec/records/batches.py, Kafka's rules): a v2
// record's offset and timestamp from its batch's base and its deltas (the batch's max
// timestamp for LogAppendTime), a legacy wrapper's inner messages with
// AbstractLegacyRecordBatch's rules (one level of compression, none empty, magic 1
// offsets relative to the last unless the wrapper's is 0, a LogAppendTime wrapper's
// timestamp). The package refuses a whole image at its first error: no records then.
func kafkacodecGo(data []byte) ([]Record, error) {
	log, err := kafkacodec.ParseKafkaLog(data, true)
	if err != nil {
		return nil, err
	}
	out := []Record{}
	for _, entry := range log.Entries {
		switch b := entry.Body.(type) {
		case *kafkacodec.KafkaRecordBatch:
			recs, err := v2Records(b)
			out = append(out, recs...)
			if err != nil {
				return out, err
			}
		case *kafkacodec.KafkaLegacyMessage:
			recs, err := legacyRecords(b)
			if err != nil {
				return out, err
			}
			out = append(out, recs...)
		}
	}
	return out, nil
}

func v2Records(b *kafkacodec.KafkaRecordBatch) ([]Record, error) {
	out := []Record{}
	if b.RecordsRegion == nil {
		return out, nil
	}
	for _, r := range b.RecordsRegion.Records {
		if b.Attributes&0x20 != 0 {
			if err := checkControl(&r); err != nil {
				return out, err
			}
		}
		ts := b.BaseTimestamp + r.TimestampDelta
		if b.Attributes&0x08 != 0 { // LogAppendTime: the batch's max timestamp
			ts = b.MaxTimestamp
		}
		rec := Record{Offset: b.BaseOffset + r.OffsetDelta, Timestamp: &ts, Control: b.Attributes&0x20 != 0,
			Headers: [][2]*string{}}
		if r.LenKey >= 0 {
			rec.Key = hexOf(r.Key)
		}
		if r.LenValue >= 0 {
			rec.Value = hexOf(r.Value)
		}
		for _, h := range r.Headers {
			k := javaUTF8([]byte(h.Key))
			var v *string
			if h.LenValue >= 0 {
				v = hexOf(h.Value)
			}
			rec.Headers = append(rec.Headers, [2]*string{&k, v})
		}
		out = append(out, rec)
	}
	return out, nil
}

// checkControl reads a control record's key (and an ABORT or COMMIT marker) as Kafka does
// (ControlRecordType.parse, EndTransactionMarker.deserialize; kafkacodec's parse_control):
// the generated parsers of the key and the marker over the bytes Kafka reads, bytes after
// them not looked at.
func checkControl(r *kafkacodec.KafkaRecord) error {
	if r.LenKey < 0 {
		return errors.New("a control record has a null key")
	}
	if len(r.Key) < 4 {
		return fmt.Errorf("a control record key of %d bytes, fewer than 4", len(r.Key))
	}
	k, err := kafkacodec.ParseKafkaControlRecordKey(r.Key[:4], true)
	if err != nil {
		return err
	}
	if k.Type != 0 && k.Type != 1 {
		return nil
	}
	if r.LenValue < 0 {
		return errors.New("an end transaction marker has a null value")
	}
	if len(r.Value) < 6 {
		return fmt.Errorf("an end transaction marker of %d bytes, fewer than 6", len(r.Value))
	}
	_, err = kafkacodec.ParseKafkaEndTxnMarker(r.Value[:6], true)
	return err
}

func legacyRecord(m *kafkacodec.KafkaLegacyMessage, offset int64, timestamp *int64) Record {
	rec := Record{Offset: offset, Timestamp: timestamp, Headers: [][2]*string{}}
	if m.LenKey >= 0 {
		rec.Key = hexOf(m.Key)
	}
	if m.LenValue >= 0 {
		rec.Value = hexOf(m.Value)
	}
	return rec
}

func legacyRecords(w *kafkacodec.KafkaLegacyMessage) ([]Record, error) {
	if w.Attributes&7 == 0 {
		var ts *int64
		if w.Magic != 0 {
			ts = w.Timestamp
		}
		return []Record{legacyRecord(w, w.Offset, ts)}, nil
	}
	if w.Inner == nil {
		return nil, errors.New("a compressed wrapper has a null value")
	}
	inner := []*kafkacodec.KafkaLegacyMessage{}
	for _, e := range w.Inner.Entries {
		if e.Message != nil {
			inner = append(inner, e.Message)
		}
	}
	if len(inner) == 0 {
		return nil, errors.New("a compressed wrapper holds no inner records")
	}
	for _, m := range inner {
		if m.Attributes&7 != 0 {
			return nil, errors.New("a compressed message inside a compressed wrapper")
		}
	}
	var base int64
	if w.Magic >= 1 && w.Offset != 0 {
		last := inner[len(inner)-1].Offset
		if w.Offset < last {
			return nil, fmt.Errorf("wrapper offset %d is smaller than its last inner offset %d", w.Offset, last)
		}
		base = w.Offset - last
	}
	logAppend := w.Magic == 1 && w.Attributes&0x08 != 0
	out := []Record{}
	for _, m := range inner {
		var ts *int64
		if w.Magic != 0 {
			t := int64(-1)
			switch {
			case m.Magic == 0:
			case m.Magic == 1 && logAppend && w.Timestamp != nil:
				t = *w.Timestamp
			case m.Timestamp != nil:
				t = *m.Timestamp
			}
			ts = &t
		}
		out = append(out, legacyRecord(m, base+m.Offset, ts))
	}
	return out, nil
}
