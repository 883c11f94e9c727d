;; @attack reads the environment and the command line through WASI, looking for
;;         APCONNECT_PASSPHRASE, HOME or a key path.
;; @host   gives the instance no environment variables and no arguments.
;; @load   ok
;; @call   tool t -> ok "environ=00/00 args=00/00"
(module
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $envsizes (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $argsizes (param i32 i32) (result i32)))
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
  (data (i32.const 1024) "{\"name\":\"wasi_environ\",\"version\":\"1\",\"abi_version\":1,\"tools\":[{\"name\":\"t\",\"description\":\"misbehaves\",\"input_schema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 2048) "{\"content\":[{\"type\":\"text\",\"text\":\"environ=XX/XX args=XX/XX\"}]}\00")

  ;; $put2 writes $v (0..99) as two decimal digits at $at.
  (func $put2 (param $at i32) (param $v i32)
    (i32.store8 (local.get $at) (i32.add (i32.const 48) (i32.div_u (local.get $v) (i32.const 10))))
    (i32.store8 (i32.add (local.get $at) (i32.const 1)) (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10)))))

  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $emit (i32.const 1024)) (return (i32.const 0))))

    (drop (call $envsizes (i32.const 8192) (i32.const 8196)))
    (call $put2 (i32.const 2091) (i32.load (i32.const 8192)))
    (call $put2 (i32.const 2094) (i32.load (i32.const 8196)))
    (drop (call $argsizes (i32.const 8192) (i32.const 8196)))
    (call $put2 (i32.const 2102) (i32.load (i32.const 8192)))
    (call $put2 (i32.const 2105) (i32.load (i32.const 8196)))
    (call $emit (i32.const 2048)) (i32.const 0)))
