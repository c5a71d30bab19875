# slot-table.sh FORMAT_MD: the entry slot's table of FORMAT_MD (the one
# headed "slot offset", under **Entry.**) as C: one static assertion per
# row that its offset is the PBITMAP_SLOT_* constant the row's value names
# (CHECK_SLOT), that the last row's 8 ASCII bytes are
# PBITMAP_SLOT_MAGIC_TEXT (CHECK_MAGIC), and that the slot's size the
# prose gives ("N-byte *entry slot*") is PBITMAP_SLOT_SIZE (CHECK_SIZE).
# The program it makes exits 0 when the magic's bytes agree too.
cat <<'C'
#include <string.h>
#include "pbitmap-format.h"
#define CHECK_SLOT(name, off) \
  _Static_assert (PBITMAP_SLOT_##name == (off), \
                  "doc/format.md's slot row of " #name " disagrees with the header")
#define CHECK_MAGIC(text) \
  _Static_assert (sizeof PBITMAP_SLOT_MAGIC_TEXT == sizeof text \
                  && sizeof text == 9, \
                  "doc/format.md's slot magic disagrees with the header"); \
  static const char magic_doc[] = text; \
  static const char magic_header[] = PBITMAP_SLOT_MAGIC_TEXT;
#define CHECK_SIZE(size) \
  _Static_assert (PBITMAP_SLOT_SIZE == (size), \
                  "doc/format.md's slot size disagrees with the header")
C
awk -F'|' '
  match($0, /[0-9]+-byte \*entry slot\*/) {
    size = substr($0, RSTART, RLENGTH); sub(/-.*/, "", size)
    printf "CHECK_SIZE (%s);\n", size
  }
  /^\| *slot offset *\|/ { on = 1; next }
  on && !/^\|/ { exit }
  on && /^\| *[0-9]+ *\|/ {
    off = $2; gsub(/ /, "", off)
    value = $4
    name = "UNKNOWN"
    if (value ~ /entry stub/) name = "STUB"
    else if (value ~ /original entry point/) name = "START"
    else if (value ~ /walk record/) name = "WALKED"
    else if (value ~ /ASCII bytes/) {
      name = "MAGIC"
      text = value; sub(/^[^`]*`/, "", text); sub(/`.*$/, "", text)
      magic = "CHECK_MAGIC (\"" text "\")"
    }
    rows++
    printf "CHECK_SLOT (%s, %s);\n", name, off
  }
  END {
    if (magic != "") print magic
    printf "// rows=%d\n", rows
    print "int\nmain (void)\n{"
    print "  return memcmp (magic_doc, magic_header, sizeof magic_doc) != 0;\n}"
  }' "$1"
