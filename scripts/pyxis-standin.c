/*
 * A stand-in for NVIDIA's pyxis SPANK plugin, loaded by the Slurm sandbox when
 * SLURM_SANDBOX_PLUGINS names pyxis (scripts/slurm-sandbox.sh builds it with cc).
 *
 * Real sites that run containers under Slurm load pyxis: sbatch, salloc and srun then take
 * --container-image, --container-mounts and the rest. This stand-in takes the same options so
 * that scripts written for such a site run on the sandbox. There is no enroot here and no image
 * to pull: a task of a step with --container-image (an srun step; a batch script runs on the host,
 * its srun steps inheriting sbatch's options) runs in a root of its own made of the host's
 * system folders (the stand-in image, the plugin argument image_dirs=, each a copy-on-write
 * layer), as the image's root would be, so a folder of the host that no image has (a site's
 * /data) is not there. Into that root go what enroot mounts itself (/proc, /dev, /sys, a fresh
 * /tmp, the PMIx folders of the step), the site's own enroot mounts (the plugin argument mounts=,
 * and job_mounts=, a file of them per job name, where the sandbox stands for a site per job) and
 * the step's --container-mounts SRC:DST[:FLAGS], a missing DST made inside the container
 * root as enroot makes it. All of it happens in the task's private mount namespace on a tmpfs of
 * its own: nothing is left on the host when the task ends. The task enters that root (chroot)
 * just before its program starts, in --container-workdir, else in its folder when the container
 * has it, else in /.
 *
 * No Slurm headers are needed: the few declarations below are SPANK's stable ABI
 * (slurm/spank.h); the Slurm functions it calls the program that loads it (srun, sbatch,
 * salloc, slurmstepd) provides.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*spank_opt_cb_f)(int val, const char *optarg, int remote);

struct spank_option {
    char *name;
    char *arginfo;
    char *usage;
    int has_arg;
    int val;
    spank_opt_cb_f cb;
};

const char plugin_name[] = "pyxis";
const char plugin_type[] = "spank";
/* SLURM_VERSION_NUMBER of the Slurm it is loaded into: the build passes it */
const unsigned int plugin_version = SANDBOX_SLURM_VERSION;

static char workdir[PATH_MAX];
static char image[PATH_MAX];       /* --container-image: the step's tasks run in a container */
static char mounts[8192];          /* --container-mounts */
/* plugstack.conf arguments: the host folders the stand-in image has, the site's enroot mounts */
static char image_dirs[2048] = "/usr,/bin,/sbin,/lib,/lib32,/lib64,/libx32,/etc,/opt,/root";
static char site_mounts[2048];
static char job_mounts[PATH_MAX];  /* a file of "JOB-NAME<TAB>SRC[:DST],..." lines: a site per job */

/* the tmpfs of the container's root, over the host's /run in the task's namespace only (the
 * task's folder, where slurmstepd takes it before the task enters, is not hidden) */
#define ROOT_TMPFS "/run"
#define ROOT ROOT_TMPFS "/root"
#define LAYERS ROOT_TMPFS "/layers"

static int ignored(int val, const char *optarg, int remote)
{
    (void)val;
    (void)optarg;
    (void)remote;
    return 0;
}

static int copy_arg(char *to, size_t size, const char *optarg)
{
    if (optarg == NULL || strlen(optarg) >= size)
        return -1;
    strcpy(to, optarg);
    return 0;
}

static int take_workdir(int val, const char *optarg, int remote)
{
    (void)val;
    (void)remote;
    return copy_arg(workdir, sizeof(workdir), optarg);
}

static int take_image(int val, const char *optarg, int remote)
{
    (void)val;
    (void)remote;
    return copy_arg(image, sizeof(image), optarg);
}

static int take_mounts(int val, const char *optarg, int remote)
{
    (void)val;
    (void)remote;
    return copy_arg(mounts, sizeof(mounts), optarg);
}

/* Registered from slurm_spank_init, as pyxis does, so that sbatch and salloc take them too (a
 * spank_options table reaches srun only). */
static struct spank_option options[] = {
    {"container-image", "[USER@][REGISTRY#]IMAGE[:TAG]|PATH", "[pyxis] the image (stand-in: the host's system folders)", 1, 0, take_image},
    {"container-mounts", "SRC:DST[:FLAGS][,SRC:DST...]", "[pyxis] bind mounts inside the container", 1, 0, take_mounts},
    {"container-workdir", "PATH", "[pyxis] the folder the task starts in", 1, 0, take_workdir},
    {"container-name", "NAME[:FLAG]", "[pyxis] a named container (stand-in: ignored)", 1, 0, ignored},
    {"container-save", "PATH", "[pyxis] save the container (stand-in: ignored)", 1, 0, ignored},
    {"container-mount-home", NULL, "[pyxis] bind the home folder", 0, 0, ignored},
    {"no-container-mount-home", NULL, "[pyxis] do not bind the home folder", 0, 0, ignored},
    {"container-remap-root", NULL, "[pyxis] root inside the container", 0, 0, ignored},
    {"no-container-remap-root", NULL, "[pyxis] no root inside the container", 0, 0, ignored},
    {"container-entrypoint", NULL, "[pyxis] run the image's entrypoint", 0, 0, ignored},
    {"no-container-entrypoint", NULL, "[pyxis] skip the image's entrypoint", 0, 0, ignored},
    {"container-entrypoint-log", NULL, "[pyxis] print the entrypoint's output", 0, 0, ignored},
    {"container-writable", NULL, "[pyxis] a writable container", 0, 0, ignored},
    {"container-readonly", NULL, "[pyxis] a read-only container", 0, 0, ignored},
    {"container-env", "NAME[,NAME...]", "[pyxis] variables the container keeps", 1, 0, ignored},
    {NULL, NULL, NULL, 0, 0, NULL},
};

extern int spank_option_register(void *sp, struct spank_option *opt);
extern int spank_getenv(void *sp, const char *var, char *buf, int len);
extern int spank_get_item(void *sp, int item, ...);
#define S_JOB_STEPID 3                 /* enum spank_item */
#define SLURM_BATCH_SCRIPT 0xfffffffbU /* the batch step's id */

/* A container step: --container-image given and not the batch step, whose script runs on the host
 * while its srun steps inherit the options */
static int in_container(void *sp)
{
    unsigned int step = 0;
    if (image[0] == '\0')
        return 0;
    return spank_get_item(sp, S_JOB_STEPID, &step) != 0 || step != SLURM_BATCH_SCRIPT;
}

int slurm_spank_init(void *sp, int ac, char **av)
{
    struct spank_option *opt;
    int i;
    for (i = 0; i < ac; i++) {
        if (strncmp(av[i], "image_dirs=", 11) == 0 && copy_arg(image_dirs, sizeof(image_dirs), av[i] + 11) != 0)
            return -1;
        if (strncmp(av[i], "mounts=", 7) == 0 && copy_arg(site_mounts, sizeof(site_mounts), av[i] + 7) != 0)
            return -1;
        if (strncmp(av[i], "job_mounts=", 11) == 0 && copy_arg(job_mounts, sizeof(job_mounts), av[i] + 11) != 0)
            return -1;
    }
    for (opt = options; opt->name != NULL; opt++) {
        if (spank_option_register(sp, opt) != 0)
            return -1;
    }
    return 0;
}

/* ---- the container's root ------------------------------------------------------------------ */

struct bind {
    int fd;                  /* the source, opened before the host's /tmp is hidden */
    char dst[PATH_MAX];
    int readonly;
};

static struct bind binds[128];
static int nbinds;

static int fail(const char *what, const char *path)
{
    fprintf(stderr, "pyxis: %s %s: %s\n", what, path, strerror(errno));
    return -1;
}

/* mkdir -p, each new folder 0755 */
static int make_path(const char *path)
{
    char at[PATH_MAX];
    char *p;
    if (strlen(path) >= sizeof(at))
        return -1;
    strcpy(at, path);
    for (p = at + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(at, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(at, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* One SRC:DST[:FLAGS] (DST defaults to SRC; FLAGS '+'-separated, ro among them) */
static int add_bind(char *spec)
{
    char *src = spec, *dst, *flags, *flag, *save;
    struct bind *b;
    if (nbinds == (int)(sizeof(binds) / sizeof(binds[0])))
        return -1;
    b = &binds[nbinds];
    dst = strchr(src, ':');
    flags = NULL;
    if (dst != NULL) {
        *dst++ = '\0';
        flags = strchr(dst, ':');
        if (flags != NULL)
            *flags++ = '\0';
    }
    if (dst == NULL || *dst == '\0')
        dst = src;
    if (src[0] != '/' || dst[0] != '/' || strlen(dst) >= sizeof(b->dst))
        return fail("a mount needs absolute paths:", src);
    b->readonly = 0;
    for (flag = flags ? strtok_r(flags, "+", &save) : NULL; flag; flag = strtok_r(NULL, "+", &save))
        if (strcmp(flag, "ro") == 0)
            b->readonly = 1;
    b->fd = open(src, O_PATH | O_CLOEXEC);
    if (b->fd < 0)
        return fail("cannot mount", src);
    strcpy(b->dst, dst);
    nbinds++;
    return 0;
}

static int add_binds(const char *list)
{
    char copy[8192], *item, *save;
    if (strlen(list) >= sizeof(copy))
        return -1;
    strcpy(copy, list);
    for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save))
        if (add_bind(item) != 0)
            return -1;
    return 0;
}

/* The site's mounts for this job's name, when the sandbox stands for a site per job */
static int add_job_mounts(void *sp)
{
    char name[1024], line[8192];
    size_t n;
    FILE *list;
    int ok = 0;
    if (job_mounts[0] == '\0' || spank_getenv(sp, "SLURM_JOB_NAME", name, sizeof(name)) != 0)
        return 0;
    list = fopen(job_mounts, "r");
    if (list == NULL)
        return fail("cannot read", job_mounts);
    n = strlen(name);
    while (ok == 0 && fgets(line, sizeof(line), list) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, name, n) == 0 && line[n] == '\t')
            ok = add_binds(line + n + 1);
    }
    fclose(list);
    return ok;
}

/* The step's PMIx folders, bound where the tasks look for them (what enroot's PMI hook does). */
static int add_pmix(void *sp)
{
    static const char *names[] = {"PMIX_SERVER_TMPDIR", "PMIX_SYSTEM_TMPDIR"};
    char path[PATH_MAX];
    size_t i;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (spank_getenv(sp, names[i], path, sizeof(path)) != 0 || path[0] != '/')
            continue;
        if (access(path, F_OK) == 0 && add_bind(path) != 0)
            return -1;
    }
    return 0;
}

static int bind_at(int fd, const char *dst, int readonly)
{
    char src[64], target[PATH_MAX];
    struct stat st;
    int made;
    snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
    if (fstat(fd, &st) != 0 || snprintf(target, sizeof(target), "%s%s", ROOT, dst) >= (int)sizeof(target))
        return fail("cannot mount at", dst);
    if (S_ISDIR(st.st_mode)) {
        made = make_path(target);
    } else {
        char parent[PATH_MAX];
        strcpy(parent, target);
        *strrchr(parent, '/') = '\0';
        made = make_path(parent);
        if (made == 0) {
            int f = open(target, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
            made = f < 0 ? -1 : close(f);
        }
    }
    if (made != 0 || mount(src, target, NULL, MS_BIND | MS_REC, NULL) != 0)
        return fail("cannot mount at", dst);
    if (readonly && mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0)
        return fail("cannot make read-only", dst);
    return 0;
}

/* The mounts below a host folder of the image (the stand-ins bound into /usr/local/sbin): an
 * overlay shows the folder's own files only, so each is bound again at its place. */
static int submounts(const char *dir)
{
    FILE *info = fopen("/proc/self/mountinfo", "r");
    char line[8192], point[PATH_MAX], target[PATH_MAX + 16];
    size_t n = strlen(dir);
    int ok = 0;
    if (info == NULL)
        return fail("cannot read", "/proc/self/mountinfo");
    while (ok == 0 && fgets(line, sizeof(line), info) != NULL) {
        if (sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1)
            continue;
        if (strncmp(point, dir, n) != 0 || point[n] != '/' || strchr(point, '\\') != NULL)
            continue;
        snprintf(target, sizeof(target), "%s%s", ROOT, point);
        if (make_path(target) != 0 || mount(point, target, NULL, MS_BIND, NULL) != 0)
            ok = fail("cannot mount at", point);
    }
    fclose(info);
    return ok;
}

static int image_root(void)
{
    char list[2048], *dir, *save, at[PATH_MAX], up[PATH_MAX], work[PATH_MAX], opts[3 * PATH_MAX + 64];
    struct stat st;
    strcpy(list, image_dirs);
    for (dir = strtok_r(list, ",", &save); dir; dir = strtok_r(NULL, ",", &save)) {
        if (lstat(dir, &st) != 0)
            continue;
        snprintf(at, sizeof(at), "%s%s", ROOT, dir);
        if (S_ISLNK(st.st_mode)) {
            char to[PATH_MAX];
            ssize_t n = readlink(dir, to, sizeof(to) - 1);
            if (n < 0)
                return fail("cannot read", dir);
            to[n] = '\0';
            if (symlink(to, at) != 0)
                return fail("cannot link", at);
            continue;
        }
        snprintf(up, sizeof(up), "%s%s.up", LAYERS, dir);
        snprintf(work, sizeof(work), "%s%s.work", LAYERS, dir);
        snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", dir, up, work);
        if (make_path(at) != 0 || make_path(up) != 0 || make_path(work) != 0
            || mount("overlay", at, "overlay", 0, opts) != 0)
            return fail("cannot make the image's", dir);
        if (submounts(dir) != 0)
            return -1;
    }
    return 0;
}

/* In the task, before privileges are dropped: a mount namespace of its own and the container's
 * root, entered with chroot. Tasks of steps without --container-image run on the host. */
int slurm_spank_task_init_privileged(void *sp, int ac, char **av)
{
    static const char *system_dirs[] = {"/proc", "/dev", "/sys", "/run"};
    char at[PATH_MAX];
    char mount_list[8192];
    size_t i;
    int k;
    (void)ac;
    (void)av;
    if (!in_container(sp))
        return 0;
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return fail("cannot make a mount namespace for", image);
    /* the sources, opened in the new namespace (a mount of another one cannot be bound) */
    nbinds = 0;
    strcpy(mount_list, mounts);
    if (add_binds(site_mounts) != 0 || add_job_mounts(sp) != 0 || add_pmix(sp) != 0
        || add_binds(mount_list) != 0)
        return -1;
    if (mount("pyxis", ROOT_TMPFS, "tmpfs", 0, "mode=0755") != 0 || make_path(ROOT) != 0)
        return fail("cannot make the container root on", ROOT_TMPFS);
    if (image_root() != 0)
        return -1;
    for (i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++) {
        snprintf(at, sizeof(at), "%s%s", ROOT, system_dirs[i]);
        if (make_path(at) != 0)
            return fail("cannot make", at);
    }
    if (mount("/dev", ROOT "/dev", NULL, MS_BIND | MS_REC, NULL) != 0
        || mount("/sys", ROOT "/sys", NULL, MS_BIND | MS_REC, NULL) != 0
        || mount("proc", ROOT "/proc", "proc", 0, NULL) != 0
        || mount("run", ROOT "/run", "tmpfs", 0, "mode=0755") != 0)
        return fail("cannot mount the system folders of", image);
    if (mkdir(ROOT "/tmp", 01777) != 0 || chmod(ROOT "/tmp", 01777) != 0)
        return fail("cannot make", ROOT "/tmp");
    for (k = 0; k < nbinds; k++) {
        if (bind_at(binds[k].fd, binds[k].dst, binds[k].readonly) != 0)
            return -1;
        close(binds[k].fd);
    }
    return 0;
}

/* In the task, just before the program starts: the container entered, in --container-workdir,
 * else in the task's folder when the container has it (a mounted one), else in its /. */
int slurm_spank_task_init(void *sp, int ac, char **av)
{
    char cwd[PATH_MAX];
    (void)ac;
    (void)av;
    if (in_container(sp)) {
        if (getcwd(cwd, sizeof(cwd)) == NULL)
            cwd[0] = '\0';
        if (chroot(ROOT) != 0)
            return fail("cannot enter the container of", image);
        if ((cwd[0] == '\0' || chdir(cwd) != 0) && chdir("/") != 0)
            return fail("cannot change to / in", image);
    }
    if (workdir[0] != '\0') {
        if (chdir(workdir) != 0) {
            fprintf(stderr, "pyxis: cannot change to --container-workdir %s\n", workdir);
            return -1;
        }
    }
    return 0;
}
