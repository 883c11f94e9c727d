;; @attack reads the real-time and monotonic clocks through WASI and sleeps 10 s
;;         with poll_oneoff, to learn the host's time or stall past the deadline.
;; @host   gives fake clocks: real time is 2022-01-01 (within a minute of it:
;;         01), the monotonic clock starts near zero (01), and the sleep returns
;;         at once (errno 00), well inside the 1 s tool deadline.
;; @limits tool_ms=1000
;; @load   ok
;; @call   tool t -> ok "realtime=01 monotonic=01 sleep=00"
(module
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (import "apconnect" "input" (func $input (param i32)))
  (import "apconnect" "output" (func $output (param i32 i32)))
  (func (export "apconnect_abi_version") (result i32) (i32.const 1))
  ;; $emit hands the NUL-terminated string at $p to the host as the output.
  (func $emit (param $p i32) (local $q i32)
    (local.set $q (local.get $p))
    (block $done (loop $scan
      (br_if $done (i32.eqz (i32.load8_u (local.get $q))))
      (local.set $q (i32.add (local.get $q) (i32.const 1)))
      (br $scan)))
    (call $output (local.get $p) (i32.sub (local.get $q) (local.get $p))))
  (memory (export "memory") 1)
  (data (i32.const 1024) "{\"name\":\"wasi_clocks\",\"version\":\"1\",\"abi_version\":1,\"tools\":[{\"name\":\"t\",\"description\":\"misbehaves\",\"input_schema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 2048) "{\"content\":[{\"type\":\"text\",\"text\":\"realtime=XX monotonic=XX sleep=XX\"}]}\00")

  ;; $put2 writes $v (0..99) as two decimal digits at $at.
  (func $put2 (param $at i32) (param $v i32)
    (i32.store8 (local.get $at) (i32.add (i32.const 48) (i32.div_u (local.get $v) (i32.const 10))))
    (i32.store8 (i32.add (local.get $at) (i32.const 1)) (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10)))))

  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $emit (i32.const 1024)) (return (i32.const 0))))

    (drop (call $clock (i32.const 0) (i64.const 1) (i32.const 8192)))
    ;; 01 when the wall clock is within a minute after 2022-01-01T00:00:00Z
    (call $put2 (i32.const 2092) (i64.lt_u (i64.sub (i64.load (i32.const 8192)) (i64.const 1640995200000000000)) (i64.const 60000000000)))
    (drop (call $clock (i32.const 1) (i64.const 1) (i32.const 8192)))
    ;; 01 when the monotonic clock reads under a minute
    (call $put2 (i32.const 2105) (i64.lt_u (i64.load (i32.const 8192)) (i64.const 60000000000)))
    ;; one relative clock subscription of 10 s at 8256, its event at 8320
    (i64.store (i32.const 8256) (i64.const 7))
    (i32.store8 (i32.const 8264) (i32.const 0))
    (i32.store (i32.const 8272) (i32.const 1))
    (i64.store (i32.const 8280) (i64.const 10000000000))
    (i64.store (i32.const 8288) (i64.const 1))
    (i32.store16 (i32.const 8296) (i32.const 0))
    (call $put2 (i32.const 2114) (call $poll (i32.const 8256) (i32.const 8320) (i32.const 1) (i32.const 8192)))
    (call $emit (i32.const 2048)) (i32.const 0)))
