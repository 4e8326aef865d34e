// Shared by the eBPF fuzz targets (`include!`d): a map of every type the VM has, for
// programs that reach them with `lddw map_fd(0..10)`; index 6 is the prog array.
fn maps() -> Vec<Map> {
    let m = |t: MapType, k: u32, v: u32, n: u32, flags: u32| {
        let spec = MapSpec {
            name: t.name().into(),
            map_type: t,
            key_size: k,
            value_size: v,
            max_entries: n,
            flags,
            initial: Vec::new(),
        };
        Map::from_spec_cpus(&spec, 2).expect("a valid map")
    };
    vec![
        m(MapType::Array, 4, 8, 4, 0),
        m(MapType::Hash, 4, 8, 4, 0),
        m(MapType::PerCpuArray, 4, 8, 2, 0),
        m(MapType::PerCpuHash, 4, 8, 2, 0),
        m(MapType::LruHash, 4, 8, 2, 0),
        m(MapType::LpmTrie, 8, 8, 4, 1),
        m(MapType::ProgArray, 4, 4, 2, 0),
        m(MapType::Ringbuf, 0, 0, 4096, 0),
        m(MapType::Queue, 0, 8, 2, 0),
        m(MapType::Stack, 0, 8, 2, 0),
        m(MapType::Devmap, 4, 4, 2, 0),
    ]
}
