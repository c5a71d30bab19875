/* pbitmap-format.h: the on-disk contract between the linker plugin, the
 * runtime and elfpatch.
 *
 * A pbitmap region is one ELF note, laid out by the linker inside the first
 * PT_LOAD segment, early in the file, and described by its own program
 * header of type PT_PRESENT_BITMAP.  The note's descriptor holds a fixed
 * header and then a bitmap with one bit per page of the *file*: bit N set
 * means "file bytes [N << page_shift, (N + 1) << page_shift) are needed at
 * start-up".  Indexing file pages, not addresses, keeps the bitmap
 * independent of the load address and lets one bitmap describe every
 * PT_LOAD of the file.
 *
 * Byte layout, offsets from the start of the region (which is the start of
 * the note, 16-aligned in memory and in the file as the linker lays it
 * out, at least 8-aligned after a tool moved it; see PBITMAP_READ_ALIGN):
 *
 *    0  u32 n_namesz      8
 *    4  u32 n_descsz      region size - 20
 *    8  u32 n_type        PBITMAP_NT_BITMAP
 *   12  char n_name[8]    "pbitmap\0"
 *   20  u32 magic         PBITMAP_MAGIC
 *   24  u16 version       PBITMAP_VERSION
 *   26  u16 header_size   offset of the bits from the region start (96)
 *   28  u32 page_shift    log2 of the page size the bits count in (12)
 *   32  u64 capacity      number of bits, i.e. file pages describable
 *   40  u64 pages_set     number of bits set (written by elfpatch)
 *   48  u64 runs          number of runs of set bits (written by elfpatch)
 *   56  u32 flags         PBITMAP_F_*
 *   60  u32 max_gap       gap in pages the runtime may read through to merge
 *                         two runs into one I/O; 0 means "do not merge";
 *                         with PBITMAP_F_GAP_AUTO the reader picks it
 *   64  s64 entry         0, or the runtime's entry slot's address minus
 *                         this field's address (set by the linker through
 *                         a PC-relative relocation; kept by fills).  The
 *                         32-byte slot holds, relative to itself, the
 *                         entry stub, the original entry point (0 when
 *                         e_entry was not redirected) and the runtime's
 *                         walk record, then "pbm-walk"; see doc/format.md
 *   72  s64 mark          0, or the address of the shared-library runtime's
 *                         8-byte mark ("pbm-todo") minus this field's
 *                         address (set by the linker like entry; kept by
 *                         fills).  No runtime reads or writes through it;
 *                         see doc/format.md
 *   80  u32 order_size    version 2: entries the order table has room
 *                         for, pbitmap_order_blocks (capacity) (the
 *                         plugin); version 1: zero
 *   84  u32 order_len     version 2: entries of the table in use, at
 *                         most order_size (written by elfpatch)
 *   88  u64 reserved      zero
 *   96  u8  bits[]        ceil(capacity / 8) bytes, zero padding to 8
 *       u16 order[]       version 2, at pbitmap_order_offset (capacity):
 *                         order_size block numbers, the first order_len
 *                         of them the blocks (PBITMAP_BLOCK_PAGES pages
 *                         each) to read first, in that order; then zero
 *                         padding to 16
 *
 * Every multi-byte field is in the byte order of the ELF file (EI_DATA).
 * Bits are numbered least significant first within a byte: page N is bit
 * (N & 7) of byte N >> 3.  That makes the bit array itself independent of
 * byte order and word size.
 *
 * Keeping the region a valid SHT_NOTE (owner "pbitmap") is deliberate:
 * objcopy, strip, patchelf and readelf all know how to carry and print a
 * note, while a section of an unknown type upsets several of them.
 *
 * The region is valid when magic, version (1 or 2), header_size and
 * page_shift hold the values above, header_size + ceil(capacity / 8)
 * fits in the segment's p_filesz, n_descsz + 20 equals that p_filesz
 * rounded as the note requires, and in version 2 the order table, as
 * order_size says, is where and as large as capacity says and fits too,
 * with order_len at most order_size.  Readers that find anything else
 * must ignore the region.  A block number of the table that is past the
 * capacity, or that came before in it, is passed over.
 */
#ifndef PBITMAP_FORMAT_H
#define PBITMAP_FORMAT_H

/* The constants are also for assembler (runtime/entry.S); the types and
 * functions after them only for C. */

/* Program header type.  Chosen in PT_LOOS..PT_HIOS away from every value
 * known to be taken (GNU, PaX, OpenBSD, Sun).  It spells "bmpd" in a
 * little-endian dump. */
#define PT_PRESENT_BITMAP 0x64706d62u

#define PBITMAP_NOTE_SECTION ".note.pbitmap"
#define PBITMAP_NOTE_NAME "pbitmap"            /* owner, with its NUL: 8 bytes */
#define PBITMAP_NOTE_NAMESZ 8u
#define PBITMAP_NT_BITMAP 1u

/* The plugin emits the note 16-aligned so that ld gives it a PT_NOTE of
 * its own (a note of alignment 4 or 8 is merged with the others).  After
 * the link the section's sh_addralign is set back to 4 so that readelf -n
 * parses it without warnings. */
#define PBITMAP_LINK_ALIGN 16u

/* Readers accept a region at any multiple of 8 in the file and in memory:
 * the header's 64-bit fields and the bits' 64-bit words need no more.
 * A tool that moves the note (patchelf) keeps only the section's
 * alignment, and elfpatch --resync then points the program header at it;
 * in practice that place is 8-aligned. */
#define PBITMAP_READ_ALIGN 8u

#define PBITMAP_MAGIC 0x50424d31u              /* "PBM1" read big-endian */
#define PBITMAP_VERSION 2u              /* what writers write */
#define PBITMAP_VERSION_MIN 1u          /* the oldest readers accept */
#define PBITMAP_HEADER_SIZE 96u
#define PBITMAP_PAGE_SHIFT 12u
#define PBITMAP_PAGE_SIZE (1u << PBITMAP_PAGE_SHIFT)

/* flags */
#define PBITMAP_F_FILLED 0x1u   /* elfpatch --fill wrote the bits */
/* The reader chooses the gap for the device it reads the file from
   (include/pbitmap-plan.h); max_gap holds PBITMAP_GAP_UNKNOWN, for readers
   that do not know this flag.  Without it max_gap is pinned: the reader
   uses it as it is (a fill with --device or --max-gap, and a bitmap
   written by an elfpatch that does not know this flag).  */
#define PBITMAP_F_GAP_AUTO 0x2u

/* Field offsets from the region start; see the table above. */
#define PBITMAP_OFF_NAMESZ 0
#define PBITMAP_OFF_DESCSZ 4
#define PBITMAP_OFF_TYPE 8
#define PBITMAP_OFF_NAME 12
#define PBITMAP_OFF_MAGIC 20
#define PBITMAP_OFF_VERSION 24
#define PBITMAP_OFF_HEADER_SIZE 26
#define PBITMAP_OFF_PAGE_SHIFT 28
#define PBITMAP_OFF_CAPACITY 32
#define PBITMAP_OFF_PAGES_SET 40
#define PBITMAP_OFF_RUNS 48
#define PBITMAP_OFF_FLAGS 56
#define PBITMAP_OFF_MAX_GAP 60
#define PBITMAP_OFF_ENTRY 64
#define PBITMAP_OFF_MARK 72
#define PBITMAP_OFF_ORDER_SIZE 80
#define PBITMAP_OFF_ORDER_LEN 84
#define PBITMAP_OFF_RESERVED 88

/* The read order (version 2) ranks blocks of this many pages, 512 KiB,
   the longest read (PBITMAP_CHUNK_PAGES, include/pbitmap-plan.h): a
   reader that follows it issues each read with the block it starts in,
   so a read begun in a block ends at the latest in the next.  Block
   numbers are 16 bits, so a file of more pages than PBITMAP_ORDER_PAGES
   (32 GiB) has no table (order_size 0).  */
#define PBITMAP_BLOCK_PAGES 128u
#define PBITMAP_ORDER_BLOCKS_MAX 65536u
#define PBITMAP_ORDER_PAGES \
  ((uint64_t) PBITMAP_ORDER_BLOCKS_MAX * PBITMAP_BLOCK_PAGES)

/* The entry slot of a static executable's runtime (runtime/entry.S,
 * __pbitmap_entry_slot), where the region's entry field leads: 32 bytes
 * of the runtime's read-only data, each word relative to the slot itself
 * so that nothing there needs a relocation before a static PIE has
 * relocated itself:
 *
 *   0   s64  the entry stub's address minus the slot's (the linker)
 *   8   s64  the original entry point minus the slot's address; 0 until
 *            the linker plugin redirects e_entry to the stub
 *   16  s64  the runtime's walk record (__pbitmap_walked) minus the
 *            slot's address (the linker)
 *   24  u64  "pbm-walk" (PBITMAP_SLOT_MAGIC_VALUE as a little-endian
 *            word): the libraries' runtimes follow the third word only
 *            when this one holds it */
#define PBITMAP_SLOT_STUB 0
#define PBITMAP_SLOT_START 8
#define PBITMAP_SLOT_WALKED 16
#define PBITMAP_SLOT_MAGIC 24
#define PBITMAP_SLOT_SIZE 32
#define PBITMAP_SLOT_MAGIC_TEXT "pbm-walk"
#define PBITMAP_SLOT_MAGIC_VALUE 0x6b6c61772d6d6270ull

/* A shared library runtime's mark (doc/format.md, Mark), as a
   little-endian word: "pbm-todo" as linked; "pbm-done" once the audit
   module (audit/audit.c) has prefetched the library, which its runtime
   then leaves alone.  */
#define PBITMAP_MARK_TODO 0x6f646f742d6d6270ull
#define PBITMAP_MARK_DONE 0x656e6f642d6d6270ull

#ifndef __ASSEMBLER__

#include <stddef.h>
#include <stdint.h>

/* The region header in the byte order of the machine reading it.  The
 * runtime may overlay it on its own mapped image (same byte order by
 * construction); elfpatch must convert fields with the file's EI_DATA. */
struct pbitmap_header
{
  uint32_t n_namesz;
  uint32_t n_descsz;
  uint32_t n_type;
  char n_name[8];
  uint32_t magic;
  uint16_t version;
  uint16_t header_size;
  uint32_t page_shift;
  uint64_t capacity;
  uint64_t pages_set;
  uint64_t runs;
  uint32_t flags;
  uint32_t max_gap;
  int64_t entry;                /* slot address - field address */
  int64_t mark;                 /* mark address - field address */
  uint32_t order_size;          /* version 2 */
  uint32_t order_len;           /* version 2 */
  uint64_t reserved;
};

_Static_assert (sizeof (struct pbitmap_header) == PBITMAP_HEADER_SIZE,
                "pbitmap header layout");
#define PBITMAP_CHECK_OFF(field, off) \
  _Static_assert (offsetof (struct pbitmap_header, field) == (off), \
                  "pbitmap header: " #field " at " #off)
PBITMAP_CHECK_OFF (n_namesz, PBITMAP_OFF_NAMESZ);
PBITMAP_CHECK_OFF (n_descsz, PBITMAP_OFF_DESCSZ);
PBITMAP_CHECK_OFF (n_type, PBITMAP_OFF_TYPE);
PBITMAP_CHECK_OFF (n_name, PBITMAP_OFF_NAME);
PBITMAP_CHECK_OFF (magic, PBITMAP_OFF_MAGIC);
PBITMAP_CHECK_OFF (version, PBITMAP_OFF_VERSION);
PBITMAP_CHECK_OFF (header_size, PBITMAP_OFF_HEADER_SIZE);
PBITMAP_CHECK_OFF (page_shift, PBITMAP_OFF_PAGE_SHIFT);
PBITMAP_CHECK_OFF (capacity, PBITMAP_OFF_CAPACITY);
PBITMAP_CHECK_OFF (pages_set, PBITMAP_OFF_PAGES_SET);
PBITMAP_CHECK_OFF (runs, PBITMAP_OFF_RUNS);
PBITMAP_CHECK_OFF (flags, PBITMAP_OFF_FLAGS);
PBITMAP_CHECK_OFF (max_gap, PBITMAP_OFF_MAX_GAP);
PBITMAP_CHECK_OFF (entry, PBITMAP_OFF_ENTRY);
PBITMAP_CHECK_OFF (mark, PBITMAP_OFF_MARK);
PBITMAP_CHECK_OFF (order_size, PBITMAP_OFF_ORDER_SIZE);
PBITMAP_CHECK_OFF (order_len, PBITMAP_OFF_ORDER_LEN);
PBITMAP_CHECK_OFF (reserved, PBITMAP_OFF_RESERVED);
#undef PBITMAP_CHECK_OFF

/* Bytes of bits for CAPACITY pages; the number of blocks of the read
 * order and where its table starts; and the region size the plugin
 * reserves: header, bits and table, rounded up to 16 so that the note's
 * descriptor size is a multiple of 4 and the region ends aligned.  They
 * take any capacity a hostile file may hold without overflowing, so
 * readers can compare their results with the region size. */
static inline uint64_t
pbitmap_bits_size (uint64_t capacity)
{
  return capacity / 8 + ((capacity & 7) != 0);
}

static inline uint64_t
pbitmap_order_blocks (uint64_t capacity)
{
  if (capacity > PBITMAP_ORDER_PAGES)
    return 0;
  return (capacity + PBITMAP_BLOCK_PAGES - 1) / PBITMAP_BLOCK_PAGES;
}

static inline uint64_t
pbitmap_order_offset (uint64_t capacity)
{
  return PBITMAP_HEADER_SIZE + ((pbitmap_bits_size (capacity) + 7)
                                & ~(uint64_t) 7);
}

static inline uint64_t
pbitmap_region_size (uint64_t capacity)
{
  return (pbitmap_order_offset (capacity) + 2 * pbitmap_order_blocks (capacity)
          + 15) & ~(uint64_t) 15;
}

/* The entries of the read order a reader follows: order_len in version
   2, none in version 1.  */
static inline uint64_t
pbitmap_order_len (const struct pbitmap_header *h)
{
  return h->version >= 2 ? h->order_len : 0;
}

/* Entry I of the order table TABLE, whose bytes are big-endian when MSB.  */
static inline uint32_t
pbitmap_order_get (const unsigned char *table, uint64_t i, int msb)
{
  const unsigned char *e = table + 2 * i;
  return msb ? (uint32_t) e[0] << 8 | e[1] : (uint32_t) e[1] << 8 | e[0];
}

/* What is wrong with a region header, the first defect in the order the
 * fields come; PBITMAP_HEADER_OK when nothing is.  H is in the reader's
 * byte order; REGION_SIZE is the segment's p_filesz, at least
 * PBITMAP_HEADER_SIZE.  The runtime only needs "ok or not"; elfpatch names
 * the defect.  No library calls: the runtime is freestanding. */
enum pbitmap_header_defect
{
  PBITMAP_HEADER_OK,
  PBITMAP_HEADER_BAD_OWNER,
  PBITMAP_HEADER_BAD_TYPE,
  PBITMAP_HEADER_BAD_NOTE_SIZE,
  PBITMAP_HEADER_BAD_MAGIC,
  PBITMAP_HEADER_BAD_VERSION,
  PBITMAP_HEADER_BAD_HEADER_SIZE,
  PBITMAP_HEADER_BAD_PAGE_SHIFT,
  PBITMAP_HEADER_BAD_CAPACITY,
  PBITMAP_HEADER_BAD_ORDER
};

static inline enum pbitmap_header_defect
pbitmap_header_check (const struct pbitmap_header *h, uint64_t region_size)
{
  const char *name = PBITMAP_NOTE_NAME;
  if (h->n_namesz != PBITMAP_NOTE_NAMESZ)
    return PBITMAP_HEADER_BAD_OWNER;
  for (unsigned i = 0; i < PBITMAP_NOTE_NAMESZ; i++)
    if (h->n_name[i] != name[i])
      return PBITMAP_HEADER_BAD_OWNER;
  if (h->n_type != PBITMAP_NT_BITMAP)
    return PBITMAP_HEADER_BAD_TYPE;
  if ((uint64_t) h->n_descsz + 20 != region_size)
    return PBITMAP_HEADER_BAD_NOTE_SIZE;
  if (h->magic != PBITMAP_MAGIC)
    return PBITMAP_HEADER_BAD_MAGIC;
  if (h->version < PBITMAP_VERSION_MIN || h->version > PBITMAP_VERSION)
    return PBITMAP_HEADER_BAD_VERSION;
  if (h->header_size != PBITMAP_HEADER_SIZE)
    return PBITMAP_HEADER_BAD_HEADER_SIZE;
  if (h->page_shift != PBITMAP_PAGE_SHIFT)
    return PBITMAP_HEADER_BAD_PAGE_SHIFT;
  if (pbitmap_bits_size (h->capacity) > region_size - PBITMAP_HEADER_SIZE)
    return PBITMAP_HEADER_BAD_CAPACITY;
  if (h->version >= 2
      && (h->order_size != pbitmap_order_blocks (h->capacity)
          || h->order_len > h->order_size
          || pbitmap_order_offset (h->capacity) + 2 * (uint64_t) h->order_size
             > region_size))
    return PBITMAP_HEADER_BAD_ORDER;
  return PBITMAP_HEADER_OK;
}

static inline int
pbitmap_test (const unsigned char *bits, uint64_t page)
{
  return (bits[page >> 3] >> (page & 7)) & 1;
}

static inline void
pbitmap_set (unsigned char *bits, uint64_t page)
{
  bits[page >> 3] |= (unsigned char) (1u << (page & 7));
}

#endif /* !__ASSEMBLER__ */

#endif /* PBITMAP_FORMAT_H */
