// Runs an ONNX model in onnxruntime (npm's onnxruntime-node, CPU) on check cases written by tg::onnx::write_cases
// and compares its outputs with ours: every element within `tol` (absolute), else exit status 1 naming the case,
// the output, the element and both values. Usage: node onnx_check.js NODE_MODULES MODEL.onnx CASES.json [TOL]
'use strict';
const fs = require('fs');
const path = require('path');

const [modules, modelPath, casesPath, tolText = '1e-5'] = process.argv.slice(2);
const ort = require(path.join(modules, 'onnxruntime-node'));
const tol = Number(tolText);

const arrays = {
  float32: (d) => Float32Array.from(d),
  float64: (d) => Float64Array.from(d),
  int64: (d) => BigInt64Array.from(d, (v) => BigInt(v)),
  bool: (d) => Uint8Array.from(d, (v) => (v ? 1 : 0)),
};

function tensor(t) {
  if (!(t.dtype in arrays)) throw new Error(`unknown dtype ${t.dtype}`);
  return new ort.Tensor(t.dtype, arrays[t.dtype](t.data), t.dims);
}

async function main() {
  const cases = JSON.parse(fs.readFileSync(casesPath, 'utf8'));
  // One thread each: the same sums in the same order on every run, and the machine is shared.
  const session = await ort.InferenceSession.create(modelPath, {intraOpNumThreads: 1, interOpNumThreads: 1});
  let worst = 0, count = 0;
  for (let c = 0; c < cases.cases.length; ++c) {
    const feeds = {};
    cases.inputs.forEach((name, i) => { feeds[name] = tensor(cases.cases[c].inputs[i]); });
    const results = await session.run(feeds);
    cases.outputs.forEach((name, i) => {
      const ours = cases.cases[c].outputs[i], theirs = results[name];
      if (JSON.stringify(Array.from(theirs.dims)) !== JSON.stringify(ours.dims))
        throw new Error(`case ${c}: output ${name} has dims [${theirs.dims}] in onnxruntime, [${ours.dims}] in ours`);
      for (let k = 0; k < ours.data.length; ++k) {
        const diff = Math.abs(Number(theirs.data[k]) - ours.data[k]);
        if (!(diff <= tol))  // NaN fails too
          throw new Error(`case ${c}: output ${name}[${k}] is ${theirs.data[k]} in onnxruntime, ${ours.data[k]} ` +
                          `in ours (difference ${diff} > ${tol})`);
        worst = Math.max(worst, diff);
        ++count;
      }
    });
  }
  const shapes = new Set(cases.cases.map((c) => `[${c.inputs[0].dims}]`));
  console.log(`onnx_check: ${cases.cases.length} cases (${cases.inputs[0]} shapes ${[...shapes].slice(0, 6).join(' ')}` +
              `${shapes.size > 6 ? ' ...' : ''}), ${count} output values, largest difference ${worst.toExponential(2)}` +
              ` <= ${tol}`);
}

main().catch((e) => { console.error(`onnx_check: ${e.message}`); process.exit(1); });
