#!/bin/sh
# The official image's entry point: a Deno subcommand or option runs deno, anything else runs as is.
if [ "$1" != "${1#-}" ]; then
  exec deno "$@"
fi
case "$1" in
  bundle | cache | check | clean | compile | completions | coverage | deploy | doc | eval | fmt | help | info | init | install | jupyter | lint | lsp | publish | repl | run | serve | task | test | types | uninstall | upgrade | vendor)
    exec deno "$@"
    ;;
esac
exec "$@"
