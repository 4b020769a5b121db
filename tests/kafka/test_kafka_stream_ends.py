"""Kafka's own decompression judges what kafkacodec says of a compressed stream's end
(tests/codec_edges.py): each gzip, snappy, zstd and LZ4 edge case goes through the
Compression.wrapForInput of the oldest and the newest 4.x release (GZIPInputStream with
Kafka's 8 KiB buffer, SnappyInputStream, Kafka's LZ4 block stream, zstd-jni; each through
ChunkedBytesStream, as DefaultRecordBatch reads a batch's records), read byte by byte to
its end: the bytes it gives, or its refusal, must be kafkacodec.runtime.compression's.
That answer is what tests/crosslang then asks of Java, C++ and JavaScript."""

from __future__ import annotations

import subprocess

import pytest
from codec_edges import codec_edges, codec_input
from kafka_broker import VERSIONS, HarnessError, classpath, for_release

pytestmark = pytest.mark.kafka

JUDGE = """
import java.io.*;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.utils.BufferSupplier;

public class StreamEnds {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String[] part = line.split(" ");
            byte[] data = part[2].equals("-") ? new byte[0] : HexFormat.of().parseHex(part[2]);
            CompressionType type = CompressionType.forId(Integer.parseInt(part[0]));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (InputStream s = Compression.of(type).build().wrapForInput(
                    ByteBuffer.wrap(data), Byte.parseByte(part[1]), BufferSupplier.create())) {
                for (int b; (b = s.read()) != -1; ) out.write(b);
                System.out.println("=" + HexFormat.of().formatHex(out.toByteArray()));
            } catch (Exception | Error e) {
                System.out.println("refused");
            }
        }
    }
}
"""


@pytest.mark.parametrize("version", VERSIONS)
def test_kafka_ends_each_stream_where_kafkacodec_does(version, tmp_path):
    try:
        cp = classpath(version)
    except HarnessError as err:
        pytest.skip(str(err))
    (tmp_path / "StreamEnds.java").write_text(for_release(JUDGE, cp))
    subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", str(tmp_path), str(tmp_path / "StreamEnds.java")],
                   check=True, capture_output=True, timeout=300)  # fmt: skip
    cases = codec_edges()
    proc = subprocess.run(["java", "-cp", f"{tmp_path}:{cp}", "StreamEnds"], input=codec_input(cases),
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = proc.stdout.split()
    assert len(got) == len(cases)
    differ = {n: (g[:40], len(g) // 2, "refused" if w is None else f"{len(w)} bytes")
              for (n, _c, _m, _d, w), g in zip(cases, got) if g != ("refused" if w is None else "=" + w.hex())}  # fmt: skip
    assert not differ, "\n".join(f"{k}: {v}" for k, v in differ.items())
