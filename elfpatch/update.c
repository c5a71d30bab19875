/* update.c: write a modified image back, atomically.
 *
 * The binary may be running, may be read by a runtime starting up at
 * this very moment, and may be on a system that crashes mid-write.  So
 * the file is never written in place (that would also fail with ETXTBSY
 * on a running executable): the new contents go to a temporary file in
 * the same directory, which is given the original's owner, group, mode
 * and extended attributes, synced, and renamed over the original; then
 * the directory is synced.  A reader sees the old file or the new one,
 * never a mix; a crash leaves one of them (and at worst a stray
 * ".NAME.XXXXXX").  Any failure before the rename removes the temporary
 * file and leaves the original untouched.
 *
 * Order matters for the metadata: chown clears the set-user-ID and
 * set-group-ID bits and the security.capability attribute, so chown
 * comes first, then chmod, then the attributes, security.capability
 * last.  An unprivileged user cannot give a file away; EPERM from chown
 * is then ignored (the file keeps the user's own ids, or the original
 * group where the user may give that), except for a set-user-ID file
 * whose owner, or a set-group-ID file whose group, would change: the
 * copy would grant the user's ids to whoever runs it, and without the
 * bit it would lose what the program may do, so that is an error, as is
 * an attribute that cannot be copied (silently dropping a capability or
 * an ACL would change what the program may do too).
 *
 * Writing past RLIMIT_FSIZE raises SIGXFSZ, whose default action kills
 * elfpatch with the temporary file half written; it is ignored while the
 * copy is written, so that write fails with EFBIG like any other error
 * and the temporary file is removed.
 *
 * The exclusive flock taken by image_open serializes elfpatch runs on one
 * file.  The target is the file a symbolic link points to, so that the
 * link stays a link.  Hard links to the old file keep the old contents.
 */

#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "elfpatch.h"

#define CAPABILITY_XATTR "security.capability"

static int
write_all (int fd, const unsigned char *buf, size_t size)
{
  while (size > 0)
    {
      ssize_t n = write (fd, buf, size);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return -1;
      buf += n;
      size -= (size_t) n;
    }
  return 0;
}

/* Copies attribute NAME from FROM to TO.  */
static int
copy_xattr (int from, int to, const char *name, const char *path)
{
  ssize_t len = fgetxattr (from, name, NULL, 0);
  char *value = len >= 0 ? malloc ((size_t) len + 1) : NULL;
  if (value != NULL)
    len = fgetxattr (from, name, value, (size_t) len);
  if (value == NULL || len < 0
      || fsetxattr (to, name, value, (size_t) len, 0) != 0)
    {
      error (0, errno, "error: %s: cannot copy extended attribute %s", path,
             name);
      free (value);
      return -1;
    }
  free (value);
  return 0;
}

/* Copies every extended attribute, security.capability last.  */
static int
copy_xattrs (int from, int to, const char *path)
{
  ssize_t size = flistxattr (from, NULL, 0);
  if (size < 0 && (errno == ENOTSUP || errno == ENOSYS))
    return 0;
  char *names = size > 0 ? malloc ((size_t) size) : NULL;
  if (size > 0 && names != NULL)
    size = flistxattr (from, names, (size_t) size);
  if (size < 0 || (size > 0 && names == NULL))
    {
      error (0, errno, "error: %s: cannot list extended attributes", path);
      free (names);
      return -1;
    }

  int rc = 0, has_capability = 0;
  for (ssize_t at = 0; at < size && rc == 0;
       at += (ssize_t) strlen (names + at) + 1)
    {
      if (strcmp (names + at, CAPABILITY_XATTR) == 0)
        has_capability = 1;
      else
        rc = copy_xattr (from, to, names + at, path);
    }
  if (rc == 0 && has_capability)
    rc = copy_xattr (from, to, CAPABILITY_XATTR, path);
  free (names);
  return rc;
}

/* After a chown the user was not allowed to make: keeps the group if the
   user may give it, and refuses a set-user-ID or set-group-ID file whose
   owner or group would change.  */
static int
keep_what_may_be_kept (struct image *img, int fd)
{
  struct stat now;
  (void) fchown (fd, (uid_t) -1, img->st.st_gid);
  if (fstat (fd, &now) != 0)
    {
      error (0, errno, "error: %s", img->path);
      return -1;
    }
  int user = (img->st.st_mode & S_ISUID) && now.st_uid != img->st.st_uid;
  int group = (img->st.st_mode & S_ISGID) && now.st_gid != img->st.st_gid;
  if (user || group)
    {
      error (0, 0, "error: %s: set-%s-ID file of %s %lu: its copy would have "
             "%s %lu; nothing was written (fill it as root or as %s)",
             img->path, user ? "user" : "group", user ? "uid" : "gid",
             (unsigned long) (user ? img->st.st_uid : img->st.st_gid),
             user ? "uid" : "gid",
             (unsigned long) (user ? now.st_uid : now.st_gid),
             user ? "its owner" : "a member of its group");
      return -1;
    }
  elfpatch_note ("%s: cannot keep owner and group (not root)", img->path);
  return 0;
}

/* Owner, group, mode and attributes of IMG onto FD.  */
static int
copy_metadata (struct image *img, int fd, const char *tmp)
{
  if (fchown (fd, img->st.st_uid, img->st.st_gid) != 0)
    {
      if (errno != EPERM || geteuid () == 0)
        {
          error (0, errno, "error: %s", tmp);
          return -1;
        }
      if (keep_what_may_be_kept (img, fd) != 0)
        return -1;
    }
  if (fchmod (fd, img->st.st_mode & 07777) != 0)
    {
      error (0, errno, "error: %s", tmp);
      return -1;
    }
  return copy_xattrs (img->fd, fd, img->path);
}

void
sync_directory (const char *dir, const char *path)
{
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || fsync (fd) != 0)
    elfpatch_warn ("%s: replaced, but syncing directory %s failed: %s", path,
                   dir, strerror (errno));
  if (fd >= 0)
    close (fd);
}

int
temp_beside (const char *target, const char *path, char **tmp, char **dir)
{
  char *dir_copy = strdup (target), *base_copy = strdup (target);
  int fd = -1;
  *tmp = *dir = NULL;
  if (dir_copy == NULL || base_copy == NULL)
    {
      error (0, errno, "error: %s", path);
      goto out;
    }
  /* ".NAME.XXXXXX" must stay a valid name for a NAME near NAME_MAX.  */
  *dir = strdup (dirname (dir_copy));
  if (*dir == NULL
      || asprintf (tmp, "%s/.%.200s.XXXXXX", *dir, basename (base_copy)) < 0)
    {
      *tmp = NULL;
      error (0, errno, "error: %s", path);
      goto out;
    }
  fd = mkostemp (*tmp, O_CLOEXEC);
  if (fd < 0)
    error (0, errno, "error: %s: cannot create a temporary file in %s",
           path, *dir);

out:
  if (fd < 0)
    {
      free (*tmp);
      free (*dir);
      *tmp = *dir = NULL;
    }
  free (dir_copy);
  free (base_copy);
  return fd;
}

int
update_write_back (struct image *img)
{
  char *target = realpath (img->path, NULL);
  if (target == NULL)
    {
      error (0, errno, "error: %s", img->path);
      return -1;
    }
  char *tmp, *dir;
  int rc = -1;
  int fd = temp_beside (target, img->path, &tmp, &dir);
  if (fd < 0)
    goto out;
  struct sigaction ignore = { .sa_handler = SIG_IGN }, old_xfsz;
  sigaction (SIGXFSZ, &ignore, &old_xfsz);
  int written = write_all (fd, img->buf, img->size);
  int write_errno = errno;
  sigaction (SIGXFSZ, &old_xfsz, NULL);
  if (written != 0)
    {
      error (0, write_errno, "error: %s: cannot write the new copy %s",
             img->path, tmp);
      goto remove;
    }
  if (copy_metadata (img, fd, tmp) != 0)
    goto remove;
  if (fsync (fd) != 0 || close (fd) != 0)
    {
      fd = -1;
      error (0, errno, "error: %s: cannot write the new copy %s", img->path,
             tmp);
      goto remove;
    }
  fd = -1;
  /* The lock and the bytes are those of the file opened at the start; if
     a link on the way has been pointed elsewhere since, TARGET is another
     file, and replacing it with this one would destroy it.  */
  struct stat now;
  if (stat (target, &now) != 0 || now.st_dev != img->st.st_dev
      || now.st_ino != img->st.st_ino)
    {
      error (0, 0, "error: %s: the file changed while elfpatch worked on it; "
             "nothing was written", img->path);
      goto remove;
    }
  if (rename (tmp, target) != 0)
    {
      error (0, errno, "error: %s: cannot replace it", img->path);
      goto remove;
    }
  sync_directory (dir, img->path);
  rc = 0;
  goto out;

remove:
  unlink (tmp);
out:
  if (fd >= 0)
    close (fd);
  free (tmp);
  free (dir);
  free (target);
  return rc;
}

/* ---- new files: order files and traces ---------------------------------
   A new file (not a binary: no metadata to keep) is written whole to a
   temporary file beside it and renamed over its name, with the mode a
   plain creat would give it.  It is begun before the work that makes
   its contents, so that a path that cannot be written fails first.  */

FILE *
new_file_begin (struct new_file *nf, const char *target)
{
  memset (nf, 0, sizeof *nf);
  nf->target = target;
  int fd = temp_beside (target, target, &nf->tmp, &nf->dir);
  if (fd < 0)
    return NULL;
  mode_t mask = umask (0);
  umask (mask);
  FILE *f = fdopen (fd, "w");
  if (f == NULL || fchmod (fd, 0666 & ~mask) != 0)
    {
      error (0, errno, "error: %s", target);
      if (f != NULL)
        fclose (f);
      else
        close (fd);
      new_file_abort (nf, NULL);
      return NULL;
    }
  return f;
}

int
new_file_commit (struct new_file *nf, FILE *f)
{
  int failed = fflush (f) != 0 || ferror (f) || fsync (fileno (f)) != 0;
  int err = errno;
  if (fclose (f) != 0 && !failed)
    {
      failed = 1;
      err = errno;
    }
  if (!failed && rename (nf->tmp, nf->target) != 0)
    {
      failed = 1;
      err = errno;
    }
  if (failed)
    {
      error (0, err, "error: %s", nf->target);
      new_file_abort (nf, NULL);
      return -1;
    }
  sync_directory (nf->dir, nf->target);
  free (nf->tmp);
  free (nf->dir);
  nf->tmp = nf->dir = NULL;
  return 0;
}

void
new_file_abort (struct new_file *nf, FILE *f)
{
  if (f != NULL)
    fclose (f);
  if (nf->tmp != NULL)
    unlink (nf->tmp);
  free (nf->tmp);
  free (nf->dir);
  nf->tmp = nf->dir = NULL;
}
