"""The cgroup CPU quota, read as harness/cpu_usage.cc's CgroupCpuQuota reads it: v2 cpu.max
and v1 cpu.cfs_quota_us, the cgroup and every ancestor, the tightest one binding; here from
a fake /sys/fs/cgroup tree and /proc/self/cgroup text."""

from kvlab.running.cpus import cgroup_quota_cpus, parse_cpu_max


def write(root, relative, text):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def test_cpu_max_text():
    assert parse_cpu_max("200000 100000") == 2.0
    assert parse_cpu_max("max 100000") is None
    assert parse_cpu_max("") is None and parse_cpu_max(None) is None
    assert parse_cpu_max("garbage") is None


def test_v2_the_tightest_ancestor_binds(tmp_path):
    write(tmp_path, "cpu.max", "max 100000")
    write(tmp_path, "kvlab.slice/cpu.max", "150000 100000")
    write(tmp_path, "kvlab.slice/run/cpu.max", "400000 100000")
    assert cgroup_quota_cpus(tmp_path, "0::/kvlab.slice/run\n") == 1.5
    assert cgroup_quota_cpus(tmp_path, "0::/\n") is None


def test_v2_under_unified(tmp_path):
    write(tmp_path, "unified/box/cpu.max", "50000 100000")
    assert cgroup_quota_cpus(tmp_path, "0::/box\n") == 0.5


def test_v1_cpu_controller(tmp_path):
    write(tmp_path, "cpu,cpuacct/box/cpu.cfs_quota_us", "300000")
    write(tmp_path, "cpu,cpuacct/box/cpu.cfs_period_us", "100000")
    write(tmp_path, "cpu,cpuacct/cpu.cfs_quota_us", "-1")
    write(tmp_path, "cpu,cpuacct/cpu.cfs_period_us", "100000")
    text = "4:memory:/box\n3:cpu,cpuacct:/box\n0::/\n"
    assert cgroup_quota_cpus(tmp_path, text) == 3.0
    # A hierarchy without the cpu controller says nothing about CPU time.
    assert cgroup_quota_cpus(tmp_path, "4:memory:/box\n") is None


def test_v1_and_v2_together_the_smaller_binds(tmp_path):
    write(tmp_path, "cpu/box/cpu.cfs_quota_us", "300000")
    write(tmp_path, "cpu/box/cpu.cfs_period_us", "100000")
    write(tmp_path, "cpu.max", "250000 100000")
    assert cgroup_quota_cpus(tmp_path, "3:cpu:/box\n0::/\n") == 2.5


def test_no_cgroup_files_no_quota(tmp_path):
    assert cgroup_quota_cpus(tmp_path, "3:cpu:/box\n0::/x\nnot a line\n") is None
