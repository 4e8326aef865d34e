use super::*;

fn spec(t: MapType, k: u32, v: u32, n: u32, flags: u32) -> MapSpec {
    MapSpec {
        name: "m".into(),
        map_type: t,
        key_size: k,
        value_size: v,
        max_entries: n,
        flags,
        initial: Vec::new(),
    }
}

fn map(t: MapType, k: u32, v: u32, n: u32, flags: u32) -> Map {
    Map::from_spec(&spec(t, k, v, n, flags)).unwrap()
}

fn errno_of(s: MapSpec) -> i64 {
    match Map::from_spec(&s) {
        Err(MapError::Invalid { errno, .. }) => errno,
        other => panic!("{other:?}"),
    }
}

#[test]
fn kernel_flags_and_errors() {
    let mut h =
        Map::new(MapDef { kind: MapKind::Hash, key_size: 2, value_size: 4, max_entries: 2 })
            .unwrap();
    assert_eq!(h.update(b"ab", &[1, 0, 0, 0], BPF_EXIST), Err(-ENOENT));
    assert_eq!(h.update(b"ab", &[1, 0, 0, 0], BPF_NOEXIST), Ok(()));
    assert_eq!(h.update(b"ab", &[2, 0, 0, 0], BPF_NOEXIST), Err(-EEXIST));
    assert_eq!(h.update(b"ab", &[2, 0, 0, 0], BPF_ANY), Ok(()));
    assert_eq!(h.update(b"cd", &[3, 0, 0, 0], BPF_ANY), Ok(()));
    assert_eq!(h.update(b"ef", &[4, 0, 0, 0], BPF_ANY), Err(-E2BIG));
    assert_eq!(h.lookup(b"ab"), Some(&[2, 0, 0, 0][..]));
    assert_eq!(h.delete(b"ab"), Ok(()));
    assert_eq!(h.delete(b"ab"), Err(-ENOENT));
    assert_eq!(h.update(b"ef", &[4, 0, 0, 0], 4), Err(-EINVAL));
    assert_eq!(h.update(b"ef", &[4, 0, 0, 0], BPF_ANY), Ok(()));
    let mut a =
        Map::new(MapDef { kind: MapKind::Array, key_size: 4, value_size: 8, max_entries: 4 })
            .unwrap();
    assert_eq!(a.lookup(&3u32.to_le_bytes()), Some(&[0; 8][..]));
    assert_eq!(a.lookup(&4u32.to_le_bytes()), None);
    assert_eq!(a.update(&4u32.to_le_bytes(), &[0; 8], BPF_ANY), Err(-E2BIG));
    assert_eq!(a.update(&1u32.to_le_bytes(), &[0; 8], BPF_NOEXIST), Err(-EEXIST));
    assert_eq!(a.delete(&1u32.to_le_bytes()), Err(-EINVAL));
    assert!(
        Map::new(MapDef { kind: MapKind::Array, key_size: 8, value_size: 8, max_entries: 4 })
            .is_err()
    );
}

#[test]
fn creation_refusals_have_the_kernels_errno() {
    use MapType as T;
    assert_eq!(errno_of(spec(T::Array, 4, 0, 1, 0)), EINVAL);
    assert_eq!(errno_of(spec(T::Array, 4, 4, 1, BPF_F_NO_PREALLOC)), EINVAL);
    assert_eq!(errno_of(spec(T::Hash, 513, 4, 1, 0)), E2BIG);
    assert_eq!(errno_of(spec(T::Hash, 0, 4, 1, 0)), EINVAL);
    assert_eq!(errno_of(spec(T::LruHash, 4, 4, 1, BPF_F_NO_PREALLOC)), ENOTSUPP);
    assert_eq!(errno_of(spec(T::Hash, 4, 4, 1, F_NO_COMMON_LRU)), EINVAL);
    assert_eq!(errno_of(spec(T::PerCpuArray, 4, 32769, 1, 0)), E2BIG);
    assert_eq!(errno_of(spec(T::LpmTrie, 8, 4, 1, 0)), EINVAL);
    assert_eq!(errno_of(spec(T::LpmTrie, 4, 4, 1, BPF_F_NO_PREALLOC)), EINVAL);
    assert_eq!(errno_of(spec(T::LpmTrie, 261, 4, 1, BPF_F_NO_PREALLOC)), EINVAL);
    assert!(Map::from_spec(&spec(T::LpmTrie, 260, 4, 1, BPF_F_NO_PREALLOC)).is_ok());
    assert_eq!(errno_of(spec(T::Queue, 4, 4, 1, 0)), EINVAL);
    assert_eq!(errno_of(spec(T::Ringbuf, 0, 0, 4096 * 3, 0)), EINVAL);
    assert_eq!(errno_of(spec(T::Ringbuf, 0, 0, 2048, 0)), EINVAL);
    assert_eq!(errno_of(spec(T::ProgArray, 4, 8, 1, 0)), EINVAL);
    assert_eq!(errno_of(spec(T::Devmap, 4, 6, 1, 0)), EINVAL);
    // Sizes past what the VM holds are refused before anything is allocated; a large map
    // costs nothing until it fills.
    assert_eq!(errno_of(spec(T::Hash, 4, 4, u32::MAX, 0)), E2BIG);
    assert_eq!(errno_of(spec(T::LruHash, 4, 4, u32::MAX, 0)), E2BIG);
    assert_eq!(errno_of(spec(T::Ringbuf, 0, 0, 1 << 31, 0)), E2BIG);
    let mut big = map(T::Hash, 4, 4, 1 << 20, 0);
    big.update(&[1; 4], &[2; 4], BPF_ANY).unwrap();
    let e = Map::from_spec(&spec(T::Sockmap, 4, 4, 1, 0)).unwrap_err();
    assert_eq!(e.to_string(), "map `m`: type SOCKMAP is not supported by sift's VM");
}

#[test]
fn global_data_initialises_the_first_value() {
    let mut s = spec(MapType::Array, 4, 8, 1, 0);
    s.initial = vec![1, 2, 3];
    let m = Map::from_spec(&s).unwrap();
    assert_eq!(m.lookup(&[0; 4]), Some(&[1, 2, 3, 0, 0, 0, 0, 0][..]));
}

#[test]
fn per_cpu_values_are_one_per_virtual_cpu() {
    let mut m = Map::from_spec_cpus(&spec(MapType::PerCpuHash, 4, 4, 4, 0), 3).unwrap();
    // A program on CPU 1 creates the element: the other CPUs' values are zero.
    m.update_from_prog(&[1, 0, 0, 0], &[7, 0, 0, 0], BPF_ANY, 1).unwrap();
    let v = m.lookup_percpu(&[1, 0, 0, 0]).unwrap();
    assert_eq!(v, vec![&[0; 4][..], &[7, 0, 0, 0][..], &[0; 4][..]]);
    // The syscall layout: one value per CPU, each padded to 8 bytes.
    let all = [1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0];
    m.update(&[1, 0, 0, 0], &all, BPF_EXIST).unwrap();
    assert_eq!(m.lookup_cpu(&[1, 0, 0, 0], 2), Some(&[3, 0, 0, 0][..]));
    assert_eq!(m.entries()[0].1, vec![1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]);
    // A program's update of an existing element changes only its CPU's value.
    m.update_from_prog(&[1, 0, 0, 0], &[9, 0, 0, 0], BPF_ANY, 0).unwrap();
    assert_eq!(m.lookup_cpu(&[1, 0, 0, 0], 1), Some(&[2, 0, 0, 0][..]));
    assert_eq!(m.lookup(&[1, 0, 0, 0]), Some(&[9, 0, 0, 0][..]));
}

#[test]
fn lru_evicts_the_least_recently_used() {
    let mut m = map(MapType::LruHash, 1, 1, 3, 0);
    for k in 1..=3u8 {
        m.update(&[k], &[k], BPF_ANY).unwrap();
    }
    // A program's lookup of 1 makes 2 the least recently used.
    assert!(m.lookup_from_prog(0, &[1], 0).is_some());
    m.update(&[4], &[4], BPF_NOEXIST).unwrap();
    assert_eq!(m.keys(), vec![vec![1], vec![3], vec![4]]);
    assert_eq!(m.update(&[9], &[9], BPF_EXIST), Err(-ENOENT));
    m.delete(&[3]).unwrap();
    m.update(&[5], &[5], BPF_ANY).unwrap();
    assert_eq!(m.keys(), vec![vec![1], vec![4], vec![5]]);
}

fn lpm_key(prefix: u32, data: [u8; 4]) -> Vec<u8> {
    [&prefix.to_le_bytes()[..], &data].concat()
}

#[test]
fn lpm_finds_the_longest_prefix() {
    let mut m = map(MapType::LpmTrie, 8, 1, 8, BPF_F_NO_PREALLOC);
    m.update(&lpm_key(8, [10, 0, 0, 0]), &[8], BPF_ANY).unwrap();
    m.update(&lpm_key(24, [10, 1, 2, 0]), &[24], BPF_ANY).unwrap();
    m.update(&lpm_key(16, [10, 1, 0, 0]), &[16], BPF_ANY).unwrap();
    m.update(&lpm_key(24, [10, 1, 3, 0]), &[25], BPF_ANY).unwrap();
    m.update(&lpm_key(0, [0; 4]), &[0], BPF_ANY).unwrap();
    let find = |m: &Map, a: [u8; 4]| m.lookup(&lpm_key(32, a)).map(|v| v[0]);
    assert_eq!(find(&m, [10, 1, 2, 3]), Some(24));
    assert_eq!(find(&m, [10, 1, 3, 3]), Some(25));
    assert_eq!(find(&m, [10, 1, 4, 3]), Some(16));
    assert_eq!(find(&m, [10, 2, 4, 3]), Some(8));
    assert_eq!(find(&m, [11, 2, 4, 3]), Some(0));
    // The lookup key's prefix length bounds the match.
    assert_eq!(m.lookup(&lpm_key(20, [10, 1, 2, 3])).map(|v| v[0]), Some(16));
    // Through the intermediate node where 10.1.2/24 and 10.1.3/24 part (/23): it holds no
    // value, the /16 above it answers.
    assert_eq!(m.lookup(&lpm_key(23, [10, 1, 2, 3])).map(|v| v[0]), Some(16));
    assert_eq!(m.update(&lpm_key(33, [0; 4]), &[1], BPF_ANY), Err(-EINVAL));
    assert_eq!(m.update(&lpm_key(16, [10, 1, 9, 9]), &[1], BPF_NOEXIST), Err(-EEXIST));
    assert_eq!(m.update(&lpm_key(17, [10, 1, 0, 0]), &[1], BPF_EXIST), Err(-ENOENT));
    assert_eq!(m.delete(&lpm_key(17, [10, 1, 0, 0])), Err(-ENOENT));
    m.delete(&lpm_key(16, [10, 1, 0, 0])).unwrap();
    assert_eq!(find(&m, [10, 1, 4, 3]), Some(8));
    assert_eq!(find(&m, [10, 1, 2, 3]), Some(24));
    m.delete(&lpm_key(24, [10, 1, 2, 0])).unwrap();
    m.delete(&lpm_key(0, [0; 4])).unwrap();
    assert_eq!(find(&m, [11, 2, 4, 3]), None);
    assert_eq!(m.keys().len(), 2);
    // Full: -ENOSPC.
    for k in 0..6u8 {
        m.update(&lpm_key(32, [1, 1, 1, k]), &[k], BPF_ANY).unwrap();
    }
    assert_eq!(m.update(&lpm_key(32, [2, 1, 1, 1]), &[1], BPF_ANY), Err(-ENOSPC));
    assert_eq!(m.entries().len(), 8);
}

#[test]
fn queues_and_stacks() {
    let mut q = map(MapType::Queue, 0, 1, 2, 0);
    let mut s = map(MapType::Stack, 0, 1, 2, 0);
    for m in [&mut q, &mut s] {
        m.push(&[1], BPF_ANY).unwrap();
        m.push(&[2], BPF_ANY).unwrap();
        assert_eq!(m.push(&[3], BPF_ANY), Err(-E2BIG));
        assert_eq!(m.push(&[3], BPF_NOEXIST), Err(-EINVAL));
        // BPF_EXIST overwrites the oldest.
        m.push(&[3], BPF_EXIST).unwrap();
    }
    assert_eq!(q.pop(), Ok(vec![2]));
    assert_eq!(s.peek(), Some(&[3][..]));
    assert_eq!(s.pop(), Ok(vec![3]));
    assert_eq!(s.pop(), Ok(vec![2]));
    assert_eq!(s.pop(), Err(-ENOENT));
    assert_eq!(q.entries(), vec![(vec![], vec![3])]);
}

#[test]
fn ring_buffer_records() {
    let mut r = map(MapType::Ringbuf, 0, 0, 4096, 0);
    let a = r.ringbuf_reserve(0, 5).unwrap();
    assert_eq!(a, MAP_BASE + 8);
    let b = r.ringbuf_reserve(0, 16).unwrap();
    assert_eq!(b, MAP_BASE + 16 + 8);
    assert_eq!(r.ringbuf_query(ringbuf::BPF_RB_AVAIL_DATA), 16 + 24);
    r.bytes_mut()[24..40].copy_from_slice(&[7; 16]);
    assert!(r.ringbuf_commit(24, false));
    // The first record is still busy: nothing to drain yet.
    assert!(r.ringbuf_drain().is_empty());
    assert!(r.ringbuf_commit(8, true));
    assert!(!r.ringbuf_commit(8, true));
    assert_eq!(r.ringbuf_drain(), vec![vec![7; 16]]);
    assert_eq!(r.ringbuf_query(ringbuf::BPF_RB_CONS_POS), 40);
    // Records fill at most size - 8 bytes; one that wraps is read whole.
    assert!(r.ringbuf_reserve(0, 4096 - 8).is_none());
    let big = r.ringbuf_reserve(0, 4040).unwrap() - MAP_BASE;
    r.bytes_mut()[big as usize..big as usize + 4040].fill(1);
    assert!(r.ringbuf_commit(big as usize, false));
    let w = r.ringbuf_reserve(0, 64);
    assert!(w.is_none(), "full");
    assert_eq!(r.ringbuf_drain(), vec![vec![1; 4040]]);
    let w = (r.ringbuf_reserve(0, 64).unwrap() - MAP_BASE) as usize;
    assert_eq!(w, 40 + 4048 + 8);
    r.bytes_mut()[w..w + 64].fill(9);
    assert!(r.ringbuf_commit(w, false));
    assert_eq!(r.ringbuf_drain(), vec![vec![9; 64]]);
    // A header the program overwrote (its length past the ring) is no record; drain stops
    // at it.
    let w = (r.ringbuf_reserve(0, 8).unwrap() - MAP_BASE) as usize;
    r.bytes_mut()[w - 8..w - 4].copy_from_slice(&(0x3fff_fff0u32 | 1 << 31).to_le_bytes());
    assert!(!r.ringbuf_commit(w, false));
    r.bytes_mut()[w - 8..w - 4].copy_from_slice(&0x3fff_fff0u32.to_le_bytes());
    assert!(r.ringbuf_drain().is_empty());
}

#[test]
fn prog_arrays_and_device_maps_are_sparse() {
    let mut p = map(MapType::ProgArray, 4, 4, 4, 0);
    assert_eq!(p.update(&[1, 0, 0, 0], &[2, 0, 0, 0], BPF_NOEXIST), Err(-EINVAL));
    p.update(&[1, 0, 0, 0], &[2, 0, 0, 0], BPF_ANY).unwrap();
    assert_eq!(p.prog_at(1), Some(2));
    assert_eq!(p.prog_at(0), None);
    assert_eq!(p.keys(), vec![vec![1, 0, 0, 0]]);
    p.delete(&[1, 0, 0, 0]).unwrap();
    assert_eq!(p.delete(&[1, 0, 0, 0]), Err(-ENOENT));
    assert_eq!(p.prog_at(1), None);
}
