;; @attack a tool recurses without end: a function that only calls itself.
;;         wazero grows its call stack on the Go heap up to a ceiling of
;;         hundreds of MiB per call, none of which memory_mib counts.
;; @host   stops the recursion at the plugin's stack budget with plugin_trap
;;         ("call stack exhausted"), discards the instance, and four such calls
;;         at once raise the host's peak RSS by far less than 100 MiB.
;; @limits memory_mib=16 instances=4
;; @load   ok
;; @call   tool recurse -> plugin_trap "call stack exhausted"
;; @call   tool recurse -> plugin_trap "call stack exhausted"
;; @rss    4 tool recurse 96MiB
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
  (data (i32.const 1024) "{\"name\":\"stack_recursion\",\"version\":\"1\",\"abi_version\":1,\"tools\":[{\"name\":\"recurse\",\"description\":\"misbehaves\",\"input_schema\":{\"type\":\"object\"}}]}\00")
  (func $recurse (call $recurse))
  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $emit (i32.const 1024)) (return (i32.const 0))))
    (call $recurse) (i32.const 0)))
