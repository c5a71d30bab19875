/* pbitmap-order.h: the order file, between its writer and its readers.
 *
 * elfpatch --order writes an order file from the traces of a program;
 * every link route reads it (the plugin for ld.bfd and gold, pbitmap-ld
 * for lld and mold; ld-plugin/order.c) and places the input sections
 * that define the listed names first, in list order.  doc/format.md,
 * section 4, is the format; these are the facts both sides use:
 *
 *     pbitmap-order 1          the first line: magic and version
 *     NAME                     then one symbol name a line
 *
 * Empty lines and lines starting with '#' are comments.  A line, its
 * newline included, is at most PBITMAP_ORDER_LINE_MAX bytes and ends in a
 * newline.  A name is bytes that pbitmap_order_name_byte accepts.
 */
#ifndef PBITMAP_ORDER_H
#define PBITMAP_ORDER_H

#define PBITMAP_ORDER_MAGIC "pbitmap-order "
#define PBITMAP_ORDER_VERSION 1
#define PBITMAP_ORDER_HEADER "pbitmap-order 1"       /* the first line */
#define PBITMAP_ORDER_LINE_MAX 65536   /* bytes, the newline included */

/* Whether byte C may be part of a name: anything but a space, a control
 * byte (below 0x20, or 0x7f) and NUL, so that a name is one word on its
 * line, whatever its encoding. */
static inline int
pbitmap_order_name_byte (unsigned char c)
{
  return c > 0x20 && c != 0x7f;
}

#endif /* PBITMAP_ORDER_H */
