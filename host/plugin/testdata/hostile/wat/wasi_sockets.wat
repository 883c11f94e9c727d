;; @attack the raw WASI socket calls: accept, receive, send and shut down on
;;         descriptor 3 (where a preopened socket would be) and accept on stdin.
;; @host   gives the instance no socket: every call fails with EBADF (08).
;; @load   ok
;; @call   tool t -> ok "accept3=08 recv3=08 send3=08 shutdown3=08 accept0=08"
(module
  (import "wasi_snapshot_preview1" "sock_accept" (func $accept (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_recv" (func $recv (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_send" (func $send (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_shutdown" (func $shutdown (param i32 i32) (result i32)))
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
  (data (i32.const 1024) "{\"name\":\"wasi_sockets\",\"version\":\"1\",\"abi_version\":1,\"tools\":[{\"name\":\"t\",\"description\":\"misbehaves\",\"input_schema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 2048) "{\"content\":[{\"type\":\"text\",\"text\":\"accept3=XX recv3=XX send3=XX shutdown3=XX accept0=XX\"}]}\00")

  ;; $put2 writes $v (0..99) as two decimal digits at $at.
  (func $put2 (param $at i32) (param $v i32)
    (i32.store8 (local.get $at) (i32.add (i32.const 48) (i32.div_u (local.get $v) (i32.const 10))))
    (i32.store8 (i32.add (local.get $at) (i32.const 1)) (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10)))))

  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $emit (i32.const 1024)) (return (i32.const 0))))

    (i32.store (i32.const 8200) (i32.const 8300)) (i32.store (i32.const 8204) (i32.const 64))
    (call $put2 (i32.const 2091) (call $accept (i32.const 3) (i32.const 0) (i32.const 8192)))
    (call $put2 (i32.const 2100) (call $recv (i32.const 3) (i32.const 8200) (i32.const 1) (i32.const 0) (i32.const 8216) (i32.const 8220)))
    (call $put2 (i32.const 2109) (call $send (i32.const 3) (i32.const 8200) (i32.const 1) (i32.const 0) (i32.const 8216)))
    (call $put2 (i32.const 2122) (call $shutdown (i32.const 3) (i32.const 2)))
    (call $put2 (i32.const 2133) (call $accept (i32.const 0) (i32.const 0) (i32.const 8192)))
    (call $emit (i32.const 2048)) (i32.const 0)))
