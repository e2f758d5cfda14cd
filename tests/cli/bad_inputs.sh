#!/bin/sh
# Bad input to every subcommand that reads or writes files: each case must end with exit status
# 2, exactly one line on stderr naming the file (or option) and what is wrong, nothing on stdout,
# no output file left behind (not even FILE.tmp), within 60 s (no hang, no crash). Then inputs
# that are unusual but valid (events out of order, overlapping kernels, zero durations) must be
# read without error, the shuffled table giving the same answer as the sorted one; and damage
# that leaves something readable (one truncated trace of two, a truncated .fsum whose blocks
# are checked one by one) is diagnosed from what is left, with a note naming the damage.
#
# usage: bad_inputs.sh FAILSLOW WORK_DIR        (ctest cli.bad_inputs runs it)
set -u
bin=$1
work=$2
rm -rf "$work"
mkdir -p "$work/out" "$work/dir" "$work/empty_dir"
cd "$work" || exit 1
fails=0
count=0

# --- the inputs ----------------------------------------------------------------------------
: > empty.txt
: > empty.json
: > empty.csv
: > empty.fsum
# binary: bytes 0..255, four times
awk 'BEGIN { for (k = 0; k < 4; ++k) for (i = 0; i < 256; ++i) printf "%c", i }' > binary.bin
cp binary.bin binary.json
cp binary.bin binary.csv
cp binary.bin binary.fsum
printf '12\n-5\n14\n' > negative.txt
printf '0\n0\n0\n' > zeros.txt
printf '12\n1e400\n14\n' > huge.txt
printf '12\nnan\n14\n' > nan.txt
printf '12\n13\n14\n' > good.txt
printf 'rank,step,name,start_ns,duration_ns,stream\n0,1,gemm,1000,-5,7\n' > negative_duration.csv
printf 'rank,step,name,start_ns,duration_ns,stream\n0,1,gemm,9223372036854775000,5000,7\n' > huge_start.csv
printf 'rank,step,name,start_ns,duration_ns,stream\n0,1,gemm,99999999999999999999,5,7\n' > huge_field.csv
printf 'rank,step,name,start_ns,duration_ns,stream\n0,1,gemm,1000\n' > short_row.csv
# a small simulated job (Kineto traces), then damaged copies of one trace
"$bin" simulate --tp 1 --pp 1 --dp 2 --steps 3 --seed 2 --out sim > /dev/null || { echo "simulate failed"; exit 1; }
"$bin" simulate --tp 1 --pp 1 --dp 2 --steps 3 --seed 2 --summaries sim.fsum > /dev/null || exit 1
size=$(wc -c < sim/rank_0.json)
head -c $((size / 2)) sim/rank_0.json > truncated.json
gzip -c sim/rank_0.json > whole.json.gz
size=$(wc -c < whole.json.gz)
head -c $((size / 2)) whole.json.gz > truncated.json.gz
size=$(wc -c < sim.fsum)
head -c $((size / 2)) sim.fsum > truncated.fsum
printf '{"schema": "failslow.truth/1", "world_size": 8, "faults": [' > truncated_truth.json

# --- the check ------------------------------------------------------------------------------
# expect NAME TEXT COMMAND...: exit 2, one line on stderr containing TEXT, empty stdout, and
# nothing left in out/.
expect() {
  name=$1
  want=$2
  shift 2
  count=$((count + 1))
  timeout 60 "$@" > stdout.txt 2> stderr.txt
  rc=$?
  lines=$(wc -l < stderr.txt)
  left=$(find out -mindepth 1 | head -3)
  if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$want" stderr.txt || [ -s stdout.txt ] || [ -n "$left" ]; then
    fails=$((fails + 1))
    echo "FAIL $name: exit $rc (want 2), $lines line(s) on stderr (want 1 with '$want'), $(wc -c < stdout.txt) bytes on stdout, left in out/: '$left'"
    sed 's/^/    stderr: /' stderr.txt | head -5
    rm -rf out
    mkdir out
  else
    echo "ok   $name: $(cat stderr.txt)"
  fi
}

# Numeric data sets: cluster, w1, detect.
for cmd in cluster detect "w1 good.txt"; do
  c=${cmd%% *}
  # shellcheck disable=SC2086  # $cmd is the subcommand and its leading arguments
  set -- "$bin" $cmd
  expect "$c missing file" "missing.txt" "$@" missing.txt
  expect "$c empty file" "empty.txt: no values (empty file)" "$@" empty.txt
  expect "$c binary file" "binary.bin:1:1 (byte 0): expected a number, found '\\x00\\x01" "$@" binary.bin
  expect "$c directory" "File is actually a directory: dir" "$@" dir
  expect "$c huge value" "huge.txt:2:1" "$@" huge.txt
  expect "$c nan" "nan.txt:2:1" "$@" nan.txt
  expect "$c unknown flag" "--bogus" "$@" good.txt --bogus
  expect "$c missing column" "good.txt:1:1" "$@" good.txt --column duration
done
expect "cluster negative durations" "negative.txt:2:1" "$bin" cluster negative.txt
expect "cluster zero durations" "zeros.txt: none of the 3 values" "$bin" cluster zeros.txt

# Traces: inspect, diagnose, compress (the last two with an output file that must not appear).
for cmd in inspect diagnose compress; do
  output=""
  [ "$cmd" = diagnose ] && output="-o out/report.txt"
  [ "$cmd" = compress ] && output="-o out/job.fsum"
  # shellcheck disable=SC2086  # $output is an option and its value, or nothing
  set -- "$bin" "$cmd" $output
  expect "$cmd missing file" "missing.json" "$@" missing.json
  expect "$cmd empty file" "empty.json" "$@" empty.json
  expect "$cmd empty table" "empty.csv" "$@" empty.csv
  expect "$cmd binary file" "binary.json" "$@" binary.json
  expect "$cmd binary table" "binary.csv" "$@" binary.csv
  expect "$cmd truncated trace" "truncated.json" "$@" truncated.json
  expect "$cmd truncated gzip trace" "truncated.json.gz" "$@" truncated.json.gz
  expect "$cmd folder without traces" "empty_dir" "$@" empty_dir
  expect "$cmd negative duration" "negative_duration.csv:2" "$@" negative_duration.csv
  expect "$cmd huge start" "huge_start.csv:2" "$@" huge_start.csv
  expect "$cmd huge field" "huge_field.csv:2" "$@" huge_field.csv
  expect "$cmd short row" "short_row.csv:2" "$@" short_row.csv
  expect "$cmd unknown flag" "--bogus" "$@" sim --bogus
done
for cmd in inspect diagnose; do
  expect "$cmd empty .fsum" "empty.fsum" "$bin" "$cmd" empty.fsum
  expect "$cmd binary .fsum" "binary.fsum" "$bin" "$cmd" binary.fsum
done
expect "diagnose output into a missing folder" "out/no/such/report.txt" "$bin" diagnose sim -o out/no/such/report.txt
expect "diagnose output is a directory" "cannot write dir" "$bin" diagnose sim -o dir
expect "compress output into a missing folder" "out/no/such/job.fsum" "$bin" compress sim -o out/no/such/job.fsum

# score: the truth and the report.
expect "score missing truth" "missing.json" "$bin" score --truth missing.json --report sim/truth.json
expect "score empty truth" "empty.json" "$bin" score --truth empty.json --report sim/truth.json
expect "score binary truth" "binary.json" "$bin" score --truth binary.json --report sim/truth.json
expect "score truncated truth" "truncated_truth.json" "$bin" score --truth truncated_truth.json --report sim/truth.json
expect "score directory" "dir: it is a directory" "$bin" score --truth dir --report sim/truth.json
expect "score truncated report" "truncated.json" "$bin" score --truth sim/truth.json --report truncated.json

# simulate: the output and the sizes.
expect "simulate output is a file" "good.txt" "$bin" simulate --tp 1 --pp 1 --dp 2 --steps 2 --out good.txt
expect "simulate zero size" "--tp: Value 0 not in range 1" "$bin" simulate --tp 0 --out out/sim
expect "simulate huge steps" "--steps: Value 1000000000 not in range" "$bin" simulate --steps 1000000000 --out out/sim
expect "simulate unknown flag" "--bogus" "$bin" simulate --bogus
expect "unknown subcommand" "unknown command 'bogus'" "$bin" bogus
expect "topology zero size" "--tp: Value 0 not in range 1" "$bin" topology --tp 0

# --- unusual but valid: read, same answer ----------------------------------------------------
valid() {
  name=$1
  shift
  count=$((count + 1))
  if timeout 60 "$@" > stdout.txt 2> stderr.txt; then
    echo "ok   $name"
  else
    fails=$((fails + 1))
    echo "FAIL $name: exit $?"
    sed 's/^/    stderr: /' stderr.txt | head -5
  fi
}
header='rank,step,name,start_ns,duration_ns,stream'
printf '%s\n0,1,gemm,1000,2500,7\n0,1,gemm,4000,1000,7\n0,2,gemm,9000,1000,7\n1,1,gemm,1100,2600,7\n1,2,gemm,9100,900,7\n' "$header" > sorted.csv
printf '%s\n1,2,gemm,9100,900,7\n0,2,gemm,9000,1000,7\n0,1,gemm,4000,1000,7\n1,1,gemm,1100,2600,7\n0,1,gemm,1000,2500,7\n' "$header" > shuffled.csv
printf '%s\n0,1,gemm,1000,2500,7\n0,1,gemm,2000,2500,7\n0,1,gemm,2500,0,7\n1,1,gemm,1000,2500,7\n' "$header" > overlapping.csv
valid "inspect events out of order" "$bin" inspect --json shuffled.csv
grep -v '"source"' stdout.txt > shuffled.out
"$bin" inspect --json sorted.csv | grep -v '"source"' > sorted.out
count=$((count + 1))
if cmp -s sorted.out shuffled.out; then
  echo "ok   events out of order: the same inspect --json as the sorted table"
else
  fails=$((fails + 1))
  echo "FAIL events out of order: inspect --json differs from the sorted table's"
  diff sorted.out shuffled.out | head -10
fi
valid "inspect overlapping and zero-length kernels" "$bin" inspect overlapping.csv
valid "diagnose overlapping and zero-length kernels" "$bin" diagnose overlapping.csv
printf '0\n12\n13\n0\n14\n' > some_zeros.txt
valid "cluster with zeros among positive values" "$bin" cluster some_zeros.txt
count=$((count + 1))
if grep -q '"nonpositive": 2' stdout.txt; then
  echo "ok   the zeros are counted (skipped.nonpositive 2)"
else
  fails=$((fails + 1))
  echo "FAIL the zeros are not counted in skipped.nonpositive"
fi
# A truncated .fsum is readable up to the cut (the codec's blocks are checked one by one):
# inspect shows what is left and says what was lost.
valid "inspect truncated .fsum" "$bin" inspect truncated.fsum
count=$((count + 1))
if grep -q "damaged blocks: [1-9]" stdout.txt; then
  echo "ok   inspect names the damage of the truncated .fsum"
else
  fails=$((fails + 1))
  echo "FAIL inspect does not report the truncated .fsum's damage"
  head -5 stdout.txt
fi

# diagnose goes on without a damaged file when others can be read, and says so in its notes.
valid "diagnose with one truncated trace of two" "$bin" diagnose truncated.json sim/rank_1.json
count=$((count + 1))
if grep -q "truncated.json: not read" stdout.txt; then
  echo "ok   diagnose notes the truncated trace it could not read"
else
  fails=$((fails + 1))
  echo "FAIL diagnose does not note the truncated trace"
fi
valid "diagnose truncated .fsum" "$bin" diagnose truncated.fsum
count=$((count + 1))
if grep -q "damaged block at byte" stdout.txt; then
  echo "ok   diagnose notes the truncated .fsum's damaged block"
else
  fails=$((fails + 1))
  echo "FAIL diagnose does not note the truncated .fsum's damage"
fi

echo "$count cases, $fails failed"
[ "$fails" -eq 0 ]
