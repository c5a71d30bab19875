# header-table.sh FORMAT_MD: the layout table of FORMAT_MD's section 2
# ("The region's layout") as C: one static assertion of offset and size
# per header field (CHECK_FIELD), and that the bits follow the header
# (CHECK_BITS).  The field's PBITMAP_OFF_* constant is checked too: it
# is the field's name in capitals.
cat <<'C'
#include <stddef.h>
#include "pbitmap-format.h"
#define CHECK_FIELD(f, off, size) \
  _Static_assert (offsetof (struct pbitmap_header, f) == (off) \
                  && sizeof ((struct pbitmap_header *) 0)->f == (size) \
                  && PBITMAP_OFF_##f == (off), \
                  "doc/format.md's row of " #f " disagrees with the header")
#define PBITMAP_OFF_n_namesz PBITMAP_OFF_NAMESZ
#define PBITMAP_OFF_n_descsz PBITMAP_OFF_DESCSZ
#define PBITMAP_OFF_n_type PBITMAP_OFF_TYPE
#define PBITMAP_OFF_n_name PBITMAP_OFF_NAME
#define PBITMAP_OFF_magic PBITMAP_OFF_MAGIC
#define PBITMAP_OFF_version PBITMAP_OFF_VERSION
#define PBITMAP_OFF_header_size PBITMAP_OFF_HEADER_SIZE
#define PBITMAP_OFF_page_shift PBITMAP_OFF_PAGE_SHIFT
#define PBITMAP_OFF_capacity PBITMAP_OFF_CAPACITY
#define PBITMAP_OFF_pages_set PBITMAP_OFF_PAGES_SET
#define PBITMAP_OFF_runs PBITMAP_OFF_RUNS
#define PBITMAP_OFF_flags PBITMAP_OFF_FLAGS
#define PBITMAP_OFF_max_gap PBITMAP_OFF_MAX_GAP
#define PBITMAP_OFF_entry PBITMAP_OFF_ENTRY
#define PBITMAP_OFF_mark PBITMAP_OFF_MARK
#define PBITMAP_OFF_order_size PBITMAP_OFF_ORDER_SIZE
#define PBITMAP_OFF_order_len PBITMAP_OFF_ORDER_LEN
#define PBITMAP_OFF_reserved PBITMAP_OFF_RESERVED
#define CHECK_BITS(off) \
  _Static_assert (sizeof (struct pbitmap_header) == (off) \
                  && PBITMAP_HEADER_SIZE == (off), \
                  "doc/format.md's bits row disagrees with the header size")
C
awk -F'|' '
  /^## 2\./ { on = 1; next }
  on && /^\|/ { table = 1 }
  table && !/^\|/ { exit }             # the first table only
  on && /^\| *[0-9]+ *\|/ {
    field = $4; gsub(/[ `]/, "", field)
    off = $2; gsub(/ /, "", off)
    size = $3; gsub(/ /, "", size)
    rows++
    if (field == "bits") printf "CHECK_BITS (%s);\n", off
    else printf "CHECK_FIELD (%s, %s, %s);\n", field, off, size
  }
  END { printf "// rows=%d\n", rows }' "$1"
