#!/bin/sh
# Runs every certsign-fuzz target (or those named in FUZZ_TARGETS) for FUZZ_SECONDS each and fails
# when any of them crashes, leaks or times out. Called by `make fuzz` after the libFuzzer build.
# Usage: run-fuzz.sh BINARY WORKDIR
#   BINARY   certsign-fuzz built with -sanitize=fuzzer,address
#   WORKDIR  seeds/ (remade every run), corpus/<target>/ (grows across runs), artifacts/, logs/
set -u
binary=${1:?usage: run-fuzz.sh BINARY WORKDIR}
work=${2:?usage: run-fuzz.sh BINARY WORKDIR}
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-pkcs12-right-password pkcs12-wrong-password certificate cms-verify fmp-client cryptopro-client emulator-fmp emulator-cryptopro pdf-verify timestamp ocsp-response}
here=$(cd "$(dirname "$0")" && pwd)

"$here/make-seeds.sh" "$work/seeds" || exit 1
# Artifacts and logs are per run; the corpus is kept.
rm -rf "$work/artifacts" "$work/logs"
mkdir -p "$work/artifacts" "$work/logs"
failed=""
summary=""
for target in $targets; do
  corpus="$work/corpus/$target"
  mkdir -p "$corpus"
  # Kept regression inputs (each also a Swift Testing test in its module's test target).
  regressions="$here/Regressions/$target"
  [ -d "$regressions" ] || regressions=""
  log="$work/logs/$target.log"
  echo "fuzz: $target for ${seconds}s"
  # SWIFT_BACKTRACE=enable=no leaves crash reports to ASan/libFuzzer. detect_leaks=1 makes LSan
  # check after inputs that allocate more than they free and at exit; see lsan.supp.
  CERTSIGN_FUZZ_TARGET=$target CERTSIGN_FUZZ_TRUST_ANCHOR="$work/seeds/trust-anchor.pem" CERTSIGN_FUZZ_SEEDS="$work/seeds" \
  SWIFT_BACKTRACE=enable=no \
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:symbolize=1" \
  LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0" \
    "$binary" "$corpus" "$work/seeds/$target" $regressions \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -detect_leaks=1 \
      -artifact_prefix="$work/artifacts/$target-" -print_final_stats=1 >"$log" 2>&1
  status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  coverage=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1)
  line=$(printf '%-22s %s  %8s runs  %6s exec/s  %s' "$target" "$([ $status -eq 0 ] && echo ok || echo FAIL)" \
         "${execs:-?}" "${speed:-?}" "${coverage:-no coverage line}")
  echo "$line"
  summary="$summary$line
"
  if [ $status -ne 0 ]; then
    failed="$failed $target"
    grep -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|SUMMARY:|Test unit written to' "$log" | head -8 | sed 's/^/    /'
    echo "    full log: $log"
  fi
done
echo
echo "fuzz summary (${seconds}s per target):"
printf '%s' "$summary"
if [ -n "$failed" ]; then
  echo "fuzz: FAILED:$failed (reproduce: CERTSIGN_FUZZ_TARGET=<target> $binary <artifact>)" >&2
  exit 1
fi
echo "fuzz: no crash, leak or timeout"
