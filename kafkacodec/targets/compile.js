// Compile kafkacodec's .ksy schemas with the official Kaitai Struct compiler.
// usage: node compile.js SCHEMA_DIR OUT_DIR LANG [LANG...]
// Prints one JSON line per (schema, language): {schema, lang, ok, files | error}.
"use strict";
const fs = require("fs");
const path = require("path");
const yaml = require("js-yaml");
const KaitaiStructCompiler = require("kaitai-struct-compiler");

const [schemaDir, outDir, ...langs] = process.argv.slice(2);
const compiler = typeof KaitaiStructCompiler === "function" ? new KaitaiStructCompiler() : KaitaiStructCompiler;

function load(file) {
  return yaml.load(fs.readFileSync(file, "utf8"));
}

function importerFor(baseDir) {
  return {
    importYaml(name, mode) {
      const file = path.join(mode === "abs" ? schemaDir : baseDir, name + ".ksy");
      return Promise.resolve(load(file));
    },
  };
}

async function main() {
  const schemas = fs.readdirSync(schemaDir).filter((f) => f.endsWith(".ksy")).sort();
  let failed = 0;
  for (const file of schemas) {
    for (const lang of langs) {
      const line = { schema: file, lang };
      try {
        const files = await compiler.compile(lang, load(path.join(schemaDir, file)), importerFor(schemaDir), false);
        const dir = path.join(outDir, lang);
        fs.mkdirSync(dir, { recursive: true });
        for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
        line.ok = true;
        line.files = Object.keys(files);
      } catch (err) {
        failed += 1;
        line.ok = false;
        line.error = String(err && err.message ? err.message : err) + (err && err.s$1 ? " " + err.s$1 : "");
        if (!err.message) line.error = JSON.stringify(err, Object.getOwnPropertyNames(err)).slice(0, 2000);
      }
      console.log(JSON.stringify(line));
    }
  }
  process.exitCode = failed ? 1 : 0;
}
main();
