// An independent Parquet writer and reader for tests/e2e/test_parquet.py: hyparquet-writer and
// hyparquet (pure JavaScript; scripts/install-deps.sh puts them in /opt/simdup/node).
//   node parquet_js.mjs write SPEC.json OUT.parquet   SPEC: {columns: [{name, type, data}],
//                                                      codec, rowGroupSize, dictionarySize}
//   node parquet_js.mjs read IN.parquet OUT.json      every row as a JSON object, in order
import fs from 'node:fs'
import zlib from 'node:zlib'

const modules = process.env.SIMDUP_NODE_MODULES ?? '/opt/simdup/node/node_modules'
const [mode, input, output] = process.argv.slice(2)

if (mode === 'write') {
  const { parquetWriteFile } = await import(`${modules}/hyparquet-writer/src/node.js`)
  const spec = JSON.parse(fs.readFileSync(input, 'utf8'))
  for (const c of spec.columns) {  // JSON has no 64-bit integers: INT64 columns take BigInts
    if (c.type === 'INT64') c.data = c.data.map(v => v === null ? null : BigInt(v))
  }
  parquetWriteFile({
    filename: output,
    columnData: spec.columns,
    codec: spec.codec ?? 'SNAPPY',
    // node's zlib: a gzip codec independent of DuckDB's
    compressors: { GZIP: bytes => new Uint8Array(zlib.gzipSync(bytes)) },
    rowGroupSize: spec.rowGroupSize ?? 100000,
    dictionarySize: spec.dictionarySize,
  })
} else if (mode === 'read') {
  const { parquetReadObjects, asyncBufferFromFile } = await import(`${modules}/hyparquet/src/node.js`)
  const rows = await parquetReadObjects({ file: await asyncBufferFromFile(input) })
  fs.writeFileSync(output, JSON.stringify(rows, (k, v) => typeof v === 'bigint' ? Number(v) : v))
} else {
  console.error('usage: parquet_js.mjs write SPEC OUT | read IN OUT')
  process.exit(2)
}
