package io.kafkacodec.spark;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One input partition as the Python planner cut it (pipeline/planner.py slice_json): bytes
 * [start, end) of one segment, the offsets [first, last] and the timestamp bound kept from
 * them, the aborted transactions of read_committed, and the identity of the file planned.
 */
final class Slice implements InputPartition {
    final String json;
    final String directory;
    final String topic;
    final int partition;
    final long baseOffset;
    final long start;
    final Long end;
    final Long first;
    final Long last;
    final Long since;
    /** (producer id, first offset, last offset) of each aborted transaction. */
    final long[][] aborted;
    /** (st_dev, st_ino) of the .log planned, or null. */
    final long[] identity;
    final boolean deleted;
    /** A slice this JVM cannot open (an object store's, a tiered segment): Python reads it. */
    final boolean python;

    Slice(JsonNode d) throws com.fasterxml.jackson.core.JsonProcessingException {
        json = Planner.JSON.writeValueAsString(d);
        directory = d.get("directory").asText();
        topic = d.get("topic").asText();
        partition = d.get("partition").asInt();
        baseOffset = d.get("base_offset").asLong();
        start = d.get("start").asLong();
        end = optional(d, "end");
        first = optional(d, "first");
        last = optional(d, "last");
        since = optional(d, "since");
        JsonNode a = d.get("aborted");
        aborted = new long[a.size()][];
        for (int i = 0; i < a.size(); i++) {
            aborted[i] = new long[] {a.get(i).get(0).asLong(), a.get(i).get(1).asLong(), a.get(i).get(2).asLong()};
        }
        JsonNode id = d.get("identity");
        identity = id == null || id.isNull() ? null : new long[] {id.get(0).asLong(), id.get(1).asLong()};
        deleted = d.get("deleted").asBoolean();
        python = d.get("python").asBoolean();
    }

    private static Long optional(JsonNode d, String name) {
        JsonNode v = d.get(name);
        return v == null || v.isNull() ? null : v.asLong();
    }
}
