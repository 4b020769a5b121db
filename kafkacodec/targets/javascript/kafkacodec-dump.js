// Parse inputs with the official Kaitai compiler's JavaScript output of kafkacodec's
// schemas and print each as one line of JSON: fields by their schema names (snake_case),
// bytes as hex, varints as their values; for a kafka_log, each entry's CRC too (computed
// over the range the schema exposes, crcFrom to crcTo).
//
//   node kafkacodec-dump.js SCHEMA_ID FILE...     e.g. kafka_log 00000000000000000000.log
//   node kafkacodec-dump.js --jobs JOBS           one input per line of JOBS:
//                                                 CLASS<TAB>PARAM<TAB>OFFSET<TAB>PATH
//
// CLASS is a schema's top class (OffsetCommitValue), PARAM its parameter (`-` for none; the
// version of a type made from a Kafka message spec), OFFSET where in the file it starts.
// One line per input: {"ok": TREE, "crc": [...]} or {"error": NAME, "message": ...}.
//
// Run it in the folder `kafkacodec export-schemas --lang javascript` writes, after
// `npm install` there (NODE_PATH=. so that the parsers find KafkaCompression). Numbers are
// JavaScript's: integers beyond 2^53 come out as the nearest double (KaitaiStream64.js
// fixes the runtime's negative int64s, which 0.11.0 gets wrong by 2^32).
"use strict";
const fs = require("fs");
const path = require("path");
const KaitaiStream = require("./KaitaiStream64"); // the official runtime, its int64 readers fixed
const { checkLog } = require("./KafkaCrc");

function camel(id) {
  return id.split("_").map((p) => p[0].toUpperCase() + p.slice(1)).join("");
}

function snake(name) {
  return name.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());
}

const VARINTS = new Set(["ZigzagVarint", "UnsignedVarint"]);

function tree(v) {
  if (v === null || v === undefined) return null;
  if (v instanceof Uint8Array) return { hex: Buffer.from(v).toString("hex") };
  if (Array.isArray(v)) return v.map(tree);
  if (typeof v === "object" && v._io !== undefined) {
    if (v.constructor && VARINTS.has(v.constructor.name)) return v.value;
    const out = {};
    for (const key of Object.keys(v)) {
      if (!key.startsWith("_")) out[snake(key)] = tree(v[key]);
    }
    return out;
  }
  return v;
}

function load(className) {
  return require(path.join(__dirname, className + ".js"))[className];
}

function dump(cls, param, offset, file) {
  const all = new Uint8Array(fs.readFileSync(file));
  const buf = all.subarray(offset);
  let result;
  try {
    const io = new KaitaiStream(buf);
    const parsed = param === null ? new cls(io) : new cls(io, null, null, param);
    result = { ok: tree(parsed) };
    if (cls.name === "KafkaLog") result.crc = checkLog(parsed, buf);
  } catch (err) {
    result = { error: err.constructor.name, message: String(err.message || err) };
  }
  process.stdout.write(JSON.stringify(result) + "\n");
}

function main() {
  const args = process.argv.slice(2);
  if (args[0] === "--jobs") {
    for (const line of fs.readFileSync(args[1], "utf8").split("\n")) {
      if (!line) continue;
      const [className, param, offset, file] = line.split("\t");
      dump(load(className), param === "-" ? null : Number(param), Number(offset), file);
    }
    return;
  }
  const [schemaId, ...files] = args;
  const cls = load(camel(schemaId));
  for (const file of files) dump(cls, null, 0, file);
}

main();
