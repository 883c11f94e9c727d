;; @attack a tool grows linear memory a page at a time until memory.grow fails,
;;         writes to every page it got, then traps.
;; @host   caps linear memory at memory_mib (memory.grow returns -1 beyond it):
;;         plugin_trap, and four such calls at once raise the host's peak RSS
;;         by no more than four instances' memory and a margin.
;; @limits memory_mib=16 instances=4
;; @load   ok
;; @call   tool grow -> plugin_trap "unreachable"
;; @rss    4 tool grow 112MiB
(module
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
  (data (i32.const 1024) "{\"name\":\"memory_grow\",\"version\":\"1\",\"abi_version\":1,\"tools\":[{\"name\":\"grow\",\"description\":\"misbehaves\",\"input_schema\":{\"type\":\"object\"}}]}\00")
  (func $grow (local $p i32)
    (block $full (loop $more
      (br_if $full (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
      (br $more)))
    (local.set $p (i32.const 65536))
    (block $done (loop $touch
      (br_if $done (i32.ge_u (local.get $p) (i32.mul (memory.size) (i32.const 65536))))
      (i32.store (local.get $p) (local.get $p))
      (local.set $p (i32.add (local.get $p) (i32.const 4096)))
      (br $touch)))
    unreachable)
  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $emit (i32.const 1024)) (return (i32.const 0))))
    (call $grow) (i32.const 0)))
