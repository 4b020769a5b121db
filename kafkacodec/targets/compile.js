// Compile kafkacodec's .ksy schemas with the official Kaitai Struct compiler.
// usage: node compile.js SCHEMA_DIR OUT_DIR LANG [LANG...]
// Schemas in SCHEMA_DIR and its folders (internal/, ...), except common/, whose schemas
// are compiled where others import them; imports are relative to the importing file.
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
  const schemas = [];
  const walk = (dir, rel) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.isDirectory() && entry.name !== "common" && !entry.name.startsWith(".")) walk(path.join(dir, entry.name), path.join(rel, entry.name));
      else if (entry.isFile() && entry.name.endsWith(".ksy")) schemas.push(path.join(rel, entry.name));
    }
  };
  walk(schemaDir, "");
  let failed = 0;
  for (const file of schemas) {
    for (const lang of langs) {
      const line = { schema: file, lang };
      try {
        const base = path.dirname(path.join(schemaDir, file));
        const files = await compiler.compile(lang, load(path.join(schemaDir, file)), importerFor(base), false);
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
