// Parse a file with the official Kaitai compiler's JavaScript output of kafkacodec's
// schemas and print it as JSON: fields by their schema names (snake_case), bytes as hex,
// zig-zag varints as their values; for a kafka_log, the CRC of every entry too.
//
//   node kafkacodec-dump.js SCHEMA_ID FILE...   e.g. kafka_log 00000000000000000000.log
//
// One line per file.
//
// Run it in the folder `kafkacodec export-schemas --lang javascript` writes, after
// `npm install` there (NODE_PATH=. so that the parsers find KafkaCompression).
"use strict";
const fs = require("fs");
const path = require("path");
const KaitaiStream = require("kaitai-struct/KaitaiStream");
const { checkLog } = require("./KafkaCrc");

function camel(id) {
  return id.split("_").map((p) => p[0].toUpperCase() + p.slice(1)).join("");
}

function snake(name) {
  return name.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());
}

function tree(v) {
  if (v === null || v === undefined) return null;
  if (v instanceof Uint8Array) return { hex: Buffer.from(v).toString("hex") };
  if (Array.isArray(v)) return v.map(tree);
  if (typeof v === "object" && v._io !== undefined) {
    if (v.constructor && v.constructor.name === "ZigzagVarint") return v.value;
    const out = {};
    for (const key of Object.keys(v)) {
      if (!key.startsWith("_")) out[snake(key)] = tree(v[key]);
    }
    return out;
  }
  return v;
}

function dump(cls, schemaId, file) {
  const buf = new Uint8Array(fs.readFileSync(file));
  let result;
  try {
    const parsed = new cls(new KaitaiStream(buf));
    result = { ok: tree(parsed) };
    if (schemaId === "kafka_log") result.crc = checkLog(parsed, buf);
  } catch (err) {
    result = { error: err.constructor.name, message: String(err.message || err) };
  }
  process.stdout.write(JSON.stringify(result) + "\n");
}

function main() {
  const [schemaId, ...files] = process.argv.slice(2);
  const cls = require(path.join(__dirname, camel(schemaId) + ".js"))[camel(schemaId)];
  for (const file of files) dump(cls, schemaId, file);
}

main();
