#!/usr/bin/env bash
# A real PostgreSQL with pgvector for the tests, CI and the benchmark.
#
#   scripts/postgres.sh [--replica] [--fast] [--url URL]             print the URL(s), serve until stdin closes or a signal
#   scripts/postgres.sh [--replica] [--fast] [--url URL] -- CMD...   run CMD with the URL(s) exported, then stop
#
# With --url (or TEST_DATABASE_URL set) and a server there that has the `vector` extension, that
# server is reused and nothing is installed or started. Otherwise, on a Debian machine:
#   1. installs what is missing from the machine's Debian packages (server, postgresql-server-dev-N,
#      dpkg-dev), as root or through passwordless sudo;
#   2. builds pgvector from Debian's source package of a newer suite (PGVECTOR_SUITE, default
#      trixie), with a deb-src line derived from the machine's own apt sources (no host is written
#      here), and installs it into that server;
#   3. starts a throwaway cluster (initdb; as the `postgres` user when run as root) on a free loopback
#      port with a private socket directory; with --replica also a streaming replica
#      (pg_basebackup -R) on a second port;
#   4. prints `TEST_DATABASE_URL=...` (and `TEST_DATABASE_READ_URL=...`) on stdout, and stops and
#      removes the cluster on exit.
# --fast turns off fsync and synchronous commit (tests; never for benchmarks that claim durability).
# Quiet unless it fails; then it names the step that broke, shows the end of its log, and exits 1.
set -euo pipefail

replica=false
fast=false
url="${TEST_DATABASE_URL:-}"
command=()
while (($#)); do
  case "$1" in
    --replica) replica=true ;;
    --fast) fast=true ;;
    --url) url="${2:?--url needs a value}"; shift ;;
    --) shift; command=("$@"); break ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "postgres.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

state="$(mktemp -d "${TMPDIR:-/tmp}/registry-pg.XXXXXX")"
chmod 755 "$state"
log="$state/provision.log"
step="start"
primary_data="" replica_data=""

as_db_user() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

stop_all() {
  local status=$?
  trap - EXIT INT TERM
  for data in "$replica_data" "$primary_data"; do
    [[ -n "$data" && -f "$data/postmaster.pid" ]] && as_db_user "$bin/pg_ctl" -D "$data" -m immediate -w stop >>"$log" 2>&1 || true
  done
  if [[ $status -ne 0 && $status -ne 130 && $status -ne 143 && -n "$step" ]]; then
    echo "postgres.sh: FAILED at step '$step' (exit $status); end of $log:" >&2
    tail -n 25 "$log" >&2 || true
    echo "postgres.sh: the log is kept in $state" >&2
  else
    rm -rf "$state"
  fi
  exit "$status"
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

run() { "$@" >>"$log" 2>&1; }

as_root() {
  if [[ $(id -u) -eq 0 ]]; then run "$@"
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then run sudo -n "$@"
  else echo "needs root (or passwordless sudo) to run: $*" >>"$log"; return 1
  fi
}

apt_updated=false
apt_install() {
  if ! $apt_updated; then as_root apt-get update -q; apt_updated=true; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

has_vector() {
  local probe="$1"
  psql "$probe" -XAtqc "select 1 from pg_available_extensions where name = 'vector'" 2>>"$log" | grep -q 1
}

export_and_run() {
  if ((${#command[@]})); then
    step=""
    set +e
    "${command[@]}"
    local status=$?
    set -e
    exit "$status"
  fi
  step=""
  # Serve until the caller closes stdin (a parent process that dies closes it too) or signals us.
  cat >/dev/null || true
  exit 0
}

# --- 0. A server that was given -------------------------------------------------------------------
if [[ -n "$url" ]]; then
  step="check the given server ($url)"
  command -v psql >/dev/null || { echo "psql is not installed" >>"$log"; false; }
  has_vector "$url" || { echo "no 'vector' extension available at the given server" >>"$log"; false; }
  export TEST_DATABASE_URL="$url"
  echo "TEST_DATABASE_URL=$url"
  if [[ -n "${TEST_DATABASE_READ_URL:-}" ]]; then echo "TEST_DATABASE_READ_URL=$TEST_DATABASE_READ_URL"; fi
  export_and_run
fi

# --- 1. The server packages ------------------------------------------------------------------------
step="find a PostgreSQL server"
server_bin() { find /usr/lib/postgresql -mindepth 3 -maxdepth 3 -path '*/bin/pg_ctl' 2>/dev/null | sort -V | tail -n 1 | xargs -r dirname; }
bin="$(server_bin)"
if [[ -z "$bin" ]]; then
  step="install the PostgreSQL server (apt-get install postgresql)"
  apt_install postgresql
  bin="$(server_bin)"
  [[ -n "$bin" ]] || { echo "no pg_ctl under /usr/lib/postgresql after installing" >>"$log"; false; }
fi
major="$(basename "$(dirname "$bin")")"
sharedir="/usr/share/postgresql/$major"

# --- 2. pgvector -----------------------------------------------------------------------------------
if [[ ! -f "$sharedir/extension/vector.control" ]]; then
  step="install build dependencies (postgresql-server-dev-$major, dpkg-dev, make, gcc)"
  need=()
  for pkg in "postgresql-server-dev-$major" dpkg-dev make gcc; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
  done
  ((${#need[@]} == 0)) || apt_install "${need[@]}"

  suite="${PGVECTOR_SUITE:-trixie}"
  step="derive a deb-src line for $suite from the machine's apt sources"
  # The URI and keyring of the machine's main Debian archive (deb822 or one-line format).
  uri="" keyring=""
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] || continue
    uri="$(awk -v RS='' '/Types:[^\n]*deb/ && /Suites:[^\n]*[a-z]+( |$|\n)/ && !/Suites:[^\n]*-security/ && /Components:[^\n]*main/ { if (match($0, /URIs: *[^ \n]+/)) { print substr($0, RSTART + 6, RLENGTH - 6) ; exit } }' "$f" | tr -d ' ')"
    if [[ -n "$uri" ]]; then
      keyring="$(awk -v RS='' -v u="$uri" 'index($0, u) && match($0, /Signed-By: *[^ \n]+/) { print substr($0, RSTART + 11, RLENGTH - 11); exit }' "$f" | tr -d ' ')"
      break
    fi
  done
  if [[ -z "$uri" && -f /etc/apt/sources.list ]]; then
    uri="$(awk '$1 == "deb" && $0 !~ /security/ && / main/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)"
  fi
  [[ -n "$uri" ]] || { echo "no Debian archive URI found in /etc/apt/sources.list{,.d}" >>"$log"; false; }
  src_list="$state/pgvector-src.sources"
  {
    echo "Types: deb-src"
    echo "URIs: $uri"
    echo "Suites: $suite"
    echo "Components: main"
    [[ -n "$keyring" ]] && echo "Signed-By: $keyring"
  } >"$src_list"
  # Only this list is read, into a private state, so the machine's own apt state is left alone.
  apt_state="$state/apt"
  mkdir -p "$apt_state/lists/partial" "$apt_state/archives/partial"
  apt_opts=(-o "Dir::Etc::sourcelist=$src_list" -o "Dir::Etc::sourceparts=-" -o "Dir::State::Lists=$apt_state/lists" -o "Dir::Cache::Archives=$apt_state/archives" -o "APT::Get::List-Cleanup=0")

  step="fetch Debian's pgvector source package from $suite (apt-get source pgvector)"
  as_root apt-get "${apt_opts[@]}" update -q
  build="$state/build"
  mkdir -p "$build"
  (cd "$build" && as_root apt-get "${apt_opts[@]}" source -q pgvector)
  srcdir="$(find "$build" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)"
  [[ -n "$srcdir" ]] || { echo "apt-get source produced no pgvector-* folder" >>"$log"; false; }

  step="build pgvector ($(basename "$srcdir")) against PostgreSQL $major"
  run make -C "$srcdir" PG_CONFIG="$bin/pg_config" OPTFLAGS="" -j"$(nproc)"
  step="install pgvector into PostgreSQL $major"
  as_root make -C "$srcdir" PG_CONFIG="$bin/pg_config" install
  [[ -f "$sharedir/extension/vector.control" ]] || { echo "vector.control missing after make install" >>"$log"; false; }
fi

# --- 3. A throwaway cluster ------------------------------------------------------------------------
free_port() { node -e 'const s=require("node:net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
if [[ $(id -u) -eq 0 ]]; then chown postgres "$state"; fi

settings=(-c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=256MB -c wal_level=replica -c max_wal_senders=4 -c hot_standby=on)
$fast && settings+=(-c fsync=off -c synchronous_commit=off -c full_page_writes=off)

start_server() { # data port socketdir
  as_db_user "$bin/pg_ctl" -D "$1" -l "$1.log" -w -t 60 -o "-p $2 -k $3 ${settings[*]}" start >>"$log" 2>&1 || { cat "$1.log" >>"$log" 2>/dev/null; return 1; }
}

step="initdb a throwaway cluster"
primary_data="$state/primary"
as_db_user mkdir -m 700 "$primary_data" "$state/socket"
run as_db_user "$bin/initdb" -D "$primary_data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8
step="start the cluster"
port="$(free_port)"
start_server "$primary_data" "$port" "$state/socket"
primary_url="postgres://postgres@127.0.0.1:$port/postgres"
step="create the vector extension"
run psql "$primary_url" -XAtq -v ON_ERROR_STOP=1 -c 'create extension if not exists vector'

if $replica; then
  step="make a streaming replica (pg_basebackup -R)"
  replica_data="$state/replica"
  run as_db_user "$bin/pg_basebackup" -h 127.0.0.1 -p "$port" -U postgres -D "$replica_data" -R -X stream -c fast
  step="start the replica"
  replica_port="$(free_port)"
  start_server "$replica_data" "$replica_port" "$state/socket"
  replica_url="postgres://postgres@127.0.0.1:$replica_port/postgres"
  step="check the replica is in recovery"
  psql "$replica_url" -XAtqc 'select pg_is_in_recovery()' 2>>"$log" | grep -q t
fi

export TEST_DATABASE_URL="$primary_url"
echo "TEST_DATABASE_URL=$primary_url"
if $replica; then
  export TEST_DATABASE_READ_URL="$replica_url"
  echo "TEST_DATABASE_READ_URL=$replica_url"
fi
export_and_run
