/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "error-util.h"
#include "macro.h"
#include "netdev.h"

/* ---- rtnetlink, the little of it we need ---- */

#define NL_BUF_SIZE 32768

typedef struct NlRequest {
        struct nlmsghdr h;
        char body[1024];
} NlRequest;

static void nl_init(NlRequest *r, uint16_t type, uint16_t flags, const void *head, size_t head_len) {
        memset(r, 0, sizeof *r);
        r->h.nlmsg_type = type;
        r->h.nlmsg_flags = NLM_F_REQUEST | flags;
        r->h.nlmsg_len = (uint32_t) NLMSG_LENGTH(head_len);
        memcpy(NLMSG_DATA(&r->h), head, head_len);
}

static void nl_attr(NlRequest *r, uint16_t type, const void *data, size_t len) {
        struct rtattr *a = (struct rtattr *) ((char *) &r->h + NLMSG_ALIGN(r->h.nlmsg_len));

        /* Our requests are a header and a few short attributes: far below the buffer. */
        if (NLMSG_ALIGN(r->h.nlmsg_len) + RTA_SPACE(len) > sizeof *r)
                abort();
        a->rta_type = type;
        a->rta_len = (unsigned short) RTA_LENGTH(len);
        memcpy(RTA_DATA(a), data, len);
        r->h.nlmsg_len = (uint32_t) (NLMSG_ALIGN(r->h.nlmsg_len) + RTA_ALIGN(a->rta_len));
}

static int nl_open(void) {
        return RET_NERRNO(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
}

static int nl_send(int fd, NlRequest *r, uint32_t *seq) {
        r->h.nlmsg_seq = ++*seq;
        if (send(fd, &r->h, r->h.nlmsg_len, 0) < 0)
                return -errno;
        return 0;
}

/* Read the answers to request seq: each data message goes to each (when set), until the ACK, the error or
 * the end of a dump. 0, a negative errno from the kernel, or each's negative return. */
static int nl_receive(int fd, uint32_t seq, int (*each)(const struct nlmsghdr *m, void *userdata),
                      void *userdata) {
        _cleanup_free_ char *buf = malloc(NL_BUF_SIZE);

        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t n = recv(fd, buf, NL_BUF_SIZE, 0);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                for (struct nlmsghdr *m = (struct nlmsghdr *) buf; NLMSG_OK(m, (size_t) n);
                     m = NLMSG_NEXT(m, n)) {
                        if (m->nlmsg_seq != seq)
                                continue;
                        if (m->nlmsg_type == NLMSG_DONE)
                                return 0;
                        if (m->nlmsg_type == NLMSG_ERROR) {
                                const struct nlmsgerr *e = NLMSG_DATA(m);
                                return e->error; /* 0 is the ACK */
                        }
                        if (each) {
                                int r = each(m, userdata);
                                if (r < 0)
                                        return r;
                        }
                        if (!(m->nlmsg_flags & NLM_F_MULTI))
                                return 0;
                }
        }
}

static int nl_call(int fd, NlRequest *r, uint32_t *seq) {
        int k;

        r->h.nlmsg_flags |= NLM_F_ACK;
        k = nl_send(fd, r, seq);
        return k < 0 ? k : nl_receive(fd, *seq, NULL, NULL);
}

/* ---- a device's addresses ---- */

typedef struct AddrAttr {
        bool has;
        uint8_t len;
        uint8_t data[16];
} AddrAttr;

typedef struct Addr {
        uint8_t family, prefixlen, scope;
        uint32_t flags;
        AddrAttr address, local, broadcast;
} Addr;

typedef struct AddrList {
        int ifindex;
        Addr *a;
        size_t n;
} AddrList;

static void attr_copy(AddrAttr *dst, const struct rtattr *a) {
        size_t len = RTA_PAYLOAD(a);
        if (len > sizeof dst->data)
                return;
        dst->has = true;
        dst->len = (uint8_t) len;
        memcpy(dst->data, RTA_DATA(a), len);
}

/* The permanent addresses of global scope, the ones the runtime-spec says a moved device keeps. */
static int collect_addr(const struct nlmsghdr *m, void *userdata) {
        AddrList *l = userdata;
        const struct ifaddrmsg *ifa = NLMSG_DATA(m);
        Addr x = { .family = ifa->ifa_family,
                   .prefixlen = ifa->ifa_prefixlen,
                   .scope = ifa->ifa_scope,
                   .flags = ifa->ifa_flags };
        int len = (int) IFA_PAYLOAD(m);

        if (m->nlmsg_type != RTM_NEWADDR || (int) ifa->ifa_index != l->ifindex)
                return 0;
        for (const struct rtattr *a = IFA_RTA(ifa); RTA_OK(a, len); a = RTA_NEXT(a, len))
                switch (a->rta_type) {
                case IFA_ADDRESS:
                        attr_copy(&x.address, a);
                        break;
                case IFA_LOCAL:
                        attr_copy(&x.local, a);
                        break;
                case IFA_BROADCAST:
                        attr_copy(&x.broadcast, a);
                        break;
                case IFA_FLAGS:
                        if (RTA_PAYLOAD(a) >= sizeof(uint32_t))
                                memcpy(&x.flags, RTA_DATA(a), sizeof(uint32_t));
                        break;
                }
        if (x.scope != RT_SCOPE_UNIVERSE || !(x.flags & IFA_F_PERMANENT) || !(x.address.has || x.local.has))
                return 0;
        Addr *n = reallocarray(l->a, l->n + 1, sizeof(Addr));
        if (!n)
                return -ENOMEM;
        l->a = n;
        l->a[l->n++] = x;
        return 0;
}

static int read_addrs(int fd, uint32_t *seq, int ifindex, AddrList *ret) {
        struct ifaddrmsg ifa = { .ifa_family = AF_UNSPEC };
        NlRequest r;
        int k;

        *ret = (AddrList){ .ifindex = ifindex };
        nl_init(&r, RTM_GETADDR, NLM_F_DUMP, &ifa, sizeof ifa);
        k = nl_send(fd, &r, seq);
        return k < 0 ? k : nl_receive(fd, *seq, collect_addr, ret);
}

static int add_addr(int fd, uint32_t *seq, int ifindex, const Addr *x) {
        struct ifaddrmsg ifa = { .ifa_family = x->family,
                                 .ifa_prefixlen = x->prefixlen,
                                 .ifa_scope = x->scope,
                                 .ifa_index = (uint32_t) ifindex };
        /* What the kernel decides itself (duplicate address detection, secondary) is not ours to replay. */
        uint32_t flags = x->flags & ~(uint32_t) (IFA_F_TENTATIVE | IFA_F_DADFAILED | IFA_F_DEPRECATED |
                                                 IFA_F_SECONDARY);
        NlRequest r;

        ifa.ifa_flags = (uint8_t) flags;
        nl_init(&r, RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE, &ifa, sizeof ifa);
        if (x->local.has)
                nl_attr(&r, IFA_LOCAL, x->local.data, x->local.len);
        if (x->address.has)
                nl_attr(&r, IFA_ADDRESS, x->address.data, x->address.len);
        if (x->broadcast.has)
                nl_attr(&r, IFA_BROADCAST, x->broadcast.data, x->broadcast.len);
        nl_attr(&r, IFA_FLAGS, &flags, sizeof flags);
        return nl_call(fd, &r, seq);
}

/* ---- links ---- */

typedef struct Link {
        int ifindex;
        char name[IFNAMSIZ];
} Link;

static int parse_link(const struct nlmsghdr *m, void *userdata) {
        Link *l = userdata;
        const struct ifinfomsg *ifi = NLMSG_DATA(m);
        int len = (int) IFLA_PAYLOAD(m);

        if (m->nlmsg_type != RTM_NEWLINK)
                return 0;
        l->ifindex = ifi->ifi_index;
        for (const struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len))
                if (a->rta_type == IFLA_IFNAME)
                        snprintf(l->name, sizeof l->name, "%.*s", (int) RTA_PAYLOAD(a),
                                 (const char *) RTA_DATA(a));
        return 0;
}

/* The link with ifindex (> 0) or name, in the namespace of fd. */
static int get_link(int fd, uint32_t *seq, int ifindex, const char *name, Link *ret) {
        struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex };
        NlRequest r;
        int k;

        *ret = (Link){};
        nl_init(&r, RTM_GETLINK, 0, &ifi, sizeof ifi);
        if (ifindex <= 0)
                nl_attr(&r, IFLA_IFNAME, name, strlen(name) + 1);
        k = nl_send(fd, &r, seq);
        if (k >= 0)
                k = nl_receive(fd, *seq, parse_link, ret);
        if (k >= 0 && ret->ifindex <= 0)
                k = -ENODEV;
        return k;
}

/* A netlink socket of the namespace netns_fd: made there (a socket keeps the namespace it was made in),
 * then back to ours. */
static int nl_open_in(int netns_fd) {
        _cleanup_close_ int ours = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        int fd, r;

        if (ours < 0)
                return -errno;
        if (setns(netns_fd, CLONE_NEWNET) < 0)
                return -errno;
        fd = nl_open();
        r = setns(ours, CLONE_NEWNET) < 0 ? -errno : 0;
        if (r < 0) {
                /* Never go on in the container's network namespace. */
                safe_close(fd);
                abort();
        }
        return fd;
}

/* ---- the two entry points ---- */

int netdev_check(const OciConfig *c, bool own_netns, bool rootless, char **reterr) {
        const OciLinux *l = &c->linux_;

        if (l->n_net_devices == 0)
                return 0;
        if (rootless)
                return errorf(
                        reterr, EPERM,
                        "linux.netDevices: moving network devices needs CAP_NET_ADMIN on the host, which a "
                        "rootless container does not have");
        if (!own_netns)
                return errorf(
                        reterr, EINVAL,
                        "linux.netDevices: unable to move network devices without a NET namespace of the "
                        "container's own (add {\"type\": \"network\"} to linux.namespaces)");
        FOREACH_ARRAY(d, l->net_devices, l->n_net_devices)
                if (if_nametoindex(d->key) == 0)
                        return errorf(reterr, ENODEV,
                                      "linux.netDevices[\"%s\"]: no network device \"%s\" on the host",
                                      d->key, d->key);
        return 0;
}

static int move_one(int host_fd, int ctr_fd, uint32_t *seq, int netns_fd, const OciKeyValue *d,
                    char **reterr) {
        const char *name = !isempty(d->value) ? d->value : d->key;
        _cleanup_free_ Addr *addrs = NULL;
        AddrList al;
        Link host, moved;
        NlRequest r;
        int k;

        k = get_link(host_fd, seq, 0, d->key, &host);
        if (k < 0)
                return errorf(reterr, k, "linux.netDevices[\"%s\"]: find it on the host: %s", d->key,
                              strerror(-k));
        /* The kernel drops a device's addresses when it changes namespace: read them first. */
        k = read_addrs(host_fd, seq, host.ifindex, &al);
        addrs = al.a;
        if (k < 0)
                return errorf(reterr, k, "linux.netDevices[\"%s\"]: read its addresses: %s", d->key,
                              strerror(-k));

        /* The kernel moves the device first and renames it there after: a name taken there would fail only
         * once the device is gone from the host. Refuse before (a "%d" template always finds a name). */
        if (!strchr(name, '%') && get_link(ctr_fd, seq, 0, name, &moved) >= 0)
                return errorf(
                        reterr, EEXIST,
                        "linux.netDevices[\"%s\"]: a device named \"%s\" exists in the container's network "
                        "namespace already",
                        d->key, name);

        struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = host.ifindex };
        uint32_t nsfd = (uint32_t) netns_fd;
        nl_init(&r, RTM_NEWLINK, 0, &ifi, sizeof ifi);
        nl_attr(&r, IFLA_NET_NS_FD, &nsfd, sizeof nsfd);
        if (!streq(name, d->key))
                nl_attr(&r, IFLA_IFNAME, name, strlen(name) + 1);
        k = nl_call(host_fd, &r, seq);
        if (k < 0)
                return errorf(
                        reterr, k,
                        "linux.netDevices[\"%s\"]: move it into the container's network namespace%s%s: %s%s",
                        d->key, streq(name, d->key) ? "" : " as ", streq(name, d->key) ? "" : name,
                        strerror(-k), k == -EEXIST ? " (a device of that name is there already)" : "");

        /* Found again by its name; a "%d" name is the kernel's choice: by its index, which it keeps there
         * unless that is taken, and only if the name there fits the template. */
        const char *pct = strchr(name, '%');
        if (!pct)
                k = get_link(ctr_fd, seq, 0, name, &moved);
        else {
                k = get_link(ctr_fd, seq, host.ifindex, NULL, &moved);
                if (k >= 0 && !strneq(moved.name, name, (size_t) (pct - name)))
                        k = -ENODEV;
        }
        if (k < 0)
                return errorf(reterr, k,
                              "linux.netDevices[\"%s\"]: find it in the container's network namespace: %s",
                              d->key, strerror(-k));
        for (size_t i = 0; i < al.n; i++) {
                k = add_addr(ctr_fd, seq, moved.ifindex, &addrs[i]);
                if (k < 0)
                        return errorf(reterr, k,
                                      "linux.netDevices[\"%s\"]: restore its address %zu as \"%s\": %s",
                                      d->key, i, moved.name, strerror(-k));
        }
        ifi = (struct ifinfomsg){ .ifi_family = AF_UNSPEC,
                                  .ifi_index = moved.ifindex,
                                  .ifi_flags = IFF_UP,
                                  .ifi_change = IFF_UP };
        nl_init(&r, RTM_NEWLINK, 0, &ifi, sizeof ifi);
        k = nl_call(ctr_fd, &r, seq);
        if (k < 0)
                return errorf(reterr, k, "linux.netDevices[\"%s\"]: set \"%s\" up: %s", d->key, moved.name,
                              strerror(-k));
        return 0;
}

int netdev_move_all(const OciConfig *c, int netns_fd, char **reterr) {
        const OciLinux *l = &c->linux_;
        _cleanup_close_ int host_fd = -EBADF, ctr_fd = -EBADF;
        uint32_t seq = 0;
        int r;

        if (l->n_net_devices == 0)
                return 0;
        host_fd = nl_open();
        if (host_fd >= 0)
                ctr_fd = nl_open_in(netns_fd);
        if (host_fd < 0 || ctr_fd < 0)
                return errorf(reterr, host_fd < 0 ? host_fd : ctr_fd, "linux.netDevices: open rtnetlink: %s",
                              strerror(-(host_fd < 0 ? host_fd : ctr_fd)));
        FOREACH_ARRAY(d, l->net_devices, l->n_net_devices) {
                r = move_one(host_fd, ctr_fd, &seq, netns_fd, d, reterr);
                if (r < 0)
                        return r;
        }
        return 0;
}
