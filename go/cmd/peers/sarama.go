package main

import (
	"encoding/binary"
	"io"
	"net"
	"time"

	"github.com/IBM/sarama"
)

// saramaFetch reads the bytes as sarama's consumer does: Broker.Fetch decodes a Fetch
// response (version 4) that a broker on loopback answers with the bytes as the partition's
// records (sarama decodes record sets only inside a response), and the records get their
// offsets and timestamps as partitionConsumer.parseRecords and parseMessages give them
// (consumer.go).
func saramaFetch(data []byte) ([]Record, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	go serveFetch(ln, data)

	conf := sarama.NewConfig()
	conf.Version = sarama.V0_11_0_0
	conf.ApiVersionsRequest = false
	conf.Net.DialTimeout, conf.Net.ReadTimeout, conf.Net.WriteTimeout = 5*time.Second, 30*time.Second, 5*time.Second
	broker := sarama.NewBroker(ln.Addr().String())
	if err := broker.Open(conf); err != nil {
		return nil, err
	}
	defer broker.Close()
	req := &sarama.FetchRequest{Version: 4, MaxWaitTime: 0, MinBytes: 0, MaxBytes: 1 << 30}
	req.AddBlock("t", 0, 0, 1<<30, -1)
	resp, err := broker.Fetch(req)
	if err != nil {
		return nil, err
	}
	block := resp.GetBlock("t", 0)
	out := []Record{}
	if block == nil {
		return out, nil
	}
	for _, set := range block.RecordsSet {
		if set.MsgSet != nil {
			out = append(out, saramaMessages(set.MsgSet)...)
		}
		if set.RecordBatch != nil {
			out = append(out, saramaRecords(set.RecordBatch)...)
		}
	}
	return out, nil
}

// saramaMessages: partitionConsumer.parseMessages's offsets and timestamps.
func saramaMessages(set *sarama.MessageSet) []Record {
	var out []Record
	for _, block := range set.Messages {
		inner := block.Messages()
		for _, msg := range inner {
			offset, ts := msg.Offset, msg.Msg.Timestamp
			if msg.Msg.Version >= 1 {
				offset += block.Offset - inner[len(inner)-1].Offset
				if msg.Msg.LogAppendTime {
					ts = block.Msg.Timestamp
				}
			}
			rec := Record{Offset: offset, Key: hexOf(msg.Msg.Key), Value: hexOf(msg.Msg.Value), Headers: [][2]*string{}}
			if msg.Msg.Version >= 1 {
				rec.Timestamp = millis(ts)
			}
			out = append(out, rec)
		}
	}
	return out
}

// saramaRecords: partitionConsumer.parseRecords's offsets and timestamps.
func saramaRecords(batch *sarama.RecordBatch) []Record {
	var out []Record
	for _, r := range batch.Records {
		ts := batch.FirstTimestamp.Add(r.TimestampDelta)
		if batch.LogAppendTime {
			ts = batch.MaxTimestamp
		}
		rec := Record{Offset: batch.FirstOffset + r.OffsetDelta, Timestamp: millis(ts), Key: hexOf(r.Key),
			Value: hexOf(r.Value), Control: batch.Control, Headers: [][2]*string{}}
		for _, h := range r.Headers {
			k := javaUTF8(h.Key)
			rec.Headers = append(rec.Headers, [2]*string{&k, hexOf(h.Value)})
		}
		out = append(out, rec)
	}
	return out
}

// serveFetch answers every request on the first connection with a Fetch response v4 whose
// one partition holds data as its records.
func serveFetch(ln net.Listener, data []byte) {
	conn, err := ln.Accept()
	if err != nil {
		return
	}
	defer conn.Close()
	for {
		var size [4]byte
		if _, err := io.ReadFull(conn, size[:]); err != nil {
			return
		}
		req := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(conn, req); err != nil || len(req) < 8 {
			return
		}
		b := binary.BigEndian.AppendUint32(nil, binary.BigEndian.Uint32(req[4:8])) // correlation id
		b = binary.BigEndian.AppendUint32(b, 0)                                    // throttle time
		b = binary.BigEndian.AppendUint32(b, 1)                                    // topics
		b = binary.BigEndian.AppendUint16(b, 1)
		b = append(b, 't')
		b = binary.BigEndian.AppendUint32(b, 1)          // partitions
		b = binary.BigEndian.AppendUint32(b, 0)          // partition
		b = binary.BigEndian.AppendUint16(b, 0)          // error code
		b = binary.BigEndian.AppendUint64(b, 1<<40)      // high watermark
		b = binary.BigEndian.AppendUint64(b, 1<<40)      // last stable offset
		b = binary.BigEndian.AppendUint32(b, 0xffffffff) // aborted transactions: null
		b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
		b = append(b, data...)
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
		if _, err := conn.Write(append(frame, b...)); err != nil {
			return
		}
	}
}
