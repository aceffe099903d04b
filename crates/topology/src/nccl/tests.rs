use super::*;
use crate::parse_spec;

fn data(name: &str) -> String {
    format!(
        "{}/../../tests/data/nccl/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn server(name: &str) -> Server {
    let path = data(name);
    parse_server(&path, &std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The least bandwidth on the route from rank `a` to rank `b`.
fn bottleneck(t: &Topology, a: usize, b: usize) -> f64 {
    let mut r = Vec::new();
    t.route(a, b, &mut r);
    assert!(!r.is_empty(), "no route {a} -> {b}");
    r.iter()
        .map(|&l| t.links[l as usize].bandwidth)
        .fold(f64::INFINITY, f64::min)
}

fn names(t: &Topology, a: usize, b: usize) -> Vec<String> {
    let mut r = Vec::new();
    t.route(a, b, &mut r);
    r.iter().map(|&l| t.link_name(l)).collect()
}

#[test]
fn every_committed_server_reads_with_eight_gpus() {
    for f in [
        "dgx-a100-nvswitch.xml",
        "p4d-24xl-topo.xml",
        "azure-ndv4-topo.xml",
        "rccl-mi300x-8p-940.xml",
    ] {
        let t = parse_spec(&data(f)).unwrap();
        assert_eq!(t.num_ranks(), 8, "{f}");
        t.check_connected().unwrap();
        for a in 0..8 {
            for b in 0..8 {
                if a != b {
                    assert!(bottleneck(&t, a, b) > 0.0);
                }
            }
        }
    }
}

#[test]
fn counts_of_gpus_nvswitches_pci_switches_cpus_nics_and_ports() {
    // (file, GPUs, NVSwitch nodes, PCIe switches, CPUs, NICs, ports)
    for (f, counts) in [
        ("dgx-a100-nvswitch.xml", [8, 1, 4, 2, 8, 8]),
        ("p4d-24xl-topo.xml", [8, 0, 4, 2, 4, 4]),
        ("azure-ndv4-topo.xml", [8, 0, 4, 4, 8, 8]),
        ("rccl-mi300x-8p-940.xml", [8, 0, 24, 2, 8, 8]),
    ] {
        let s = server(f);
        let got = [
            s.count(Part::Gpu),
            s.count(Part::NvSwitch),
            s.count(Part::PciSwitch),
            s.count(Part::Cpu),
            s.count(Part::Nic),
            s.count(Part::Port),
        ];
        assert_eq!(got, counts, "{f}");
        assert_eq!(s.ports.len(), counts[5]);
    }
}

#[test]
fn an_nvswitch_route_carries_twelve_sm80_nvlinks() {
    let t = parse_spec(&data("dgx-a100-nvswitch.xml")).unwrap();
    // 6 <nvlink count="2"> elements × SM80_NVLINK_BW 20 GB/s.
    assert_eq!(bottleneck(&t, 0, 7), 12.0 * 20e9);
    assert_eq!(names(&t, 0, 7), ["gpu0 -> nvswitch", "nvswitch -> gpu7"]);
    assert_eq!(nvlink_bw(90), 20.6e9);
    assert_eq!(nvlink_bw(86), 12e9);
    assert_eq!(nvlink_bw(70), 20e9);
    assert_eq!(nvlink_bw(60), 18e9);
}

#[test]
fn pcie_routes_take_the_lanes_and_the_cpu_link_as_nccl_prices_them() {
    let t = parse_spec(&data("p4d-24xl-topo.xml")).unwrap();
    // 16 lanes × 8 GT/s (60 × 100 Mb/s) / 80 = 12 GB/s, through the switch.
    assert_eq!(bottleneck(&t, 0, 1), 12e9);
    assert_eq!(names(&t, 0, 1).len(), 2);
    // Across the sockets: Skylake (model 85 = 0x55), SKL_QPI_BW 10 GB/s.
    assert_eq!(bottleneck(&t, 0, 4), 10e9);
    let t = parse_spec(&data("azure-ndv4-topo.xml")).unwrap();
    // 16 GT/s x16 = 24 GB/s; AMD's CPU link AMD_BW 16 GB/s.
    assert_eq!(bottleneck(&t, 0, 1), 24e9);
    assert_eq!(bottleneck(&t, 0, 2), 16e9);
}

#[test]
fn xgmi_links_take_rccls_mi300_figure() {
    let t = parse_spec(&data("rccl-mi300x-8p-940.xml")).unwrap();
    assert_eq!(bottleneck(&t, 0, 5), 48e9);
    assert_eq!(names(&t, 0, 5).len(), 1);
}

#[test]
fn gpus_take_the_nearest_port_spread_over_equals() {
    let s = server("p4d-24xl-topo.xml");
    assert_eq!(s.gpu_port, [0, 0, 1, 1, 2, 2, 3, 3]);
    let s = server("dgx-a100-nvswitch.xml");
    assert_eq!(s.gpu_port, [0, 1, 2, 3, 4, 5, 6, 7]);
    // A port's speed in Mb/s / 8000: 200 Gb/s is 25 GB/s.
    let links = s.graph.links();
    let last = *s.gpu_to_port[0].last().unwrap();
    assert_eq!(links[last as usize].bandwidth, 25e9);
    assert_eq!(links[last as usize].to, s.ports[0]);
}

/// A cluster file beside a one-switch fabric of `hosts` hosts.
fn cluster_file(dir: &str, server: &str, servers: usize, hosts: usize) -> String {
    let dir = std::env::temp_dir().join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut fabric = String::from("kind = \"tree\"\nbandwidth = 50e9\n");
    fabric += "[[node]]\nname = \"sw\"\nkind = \"switch\"\n";
    for h in 0..hosts {
        fabric += &format!("[[node]]\nname = \"h{h}\"\n[[edge]]\na = \"h{h}\"\nb = \"sw\"\n");
    }
    std::fs::write(dir.join("fabric.toml"), fabric).unwrap();
    let path = dir.join("cluster.toml");
    std::fs::write(
        &path,
        format!(
            "kind = \"cluster\"\nserver = \"{}\"\nservers = {servers}\nfabric = \"fabric.toml\"\n",
            data(server)
        ),
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn cluster_routes_leave_by_the_gpus_nic_and_cross_the_fabric() {
    let t = parse_spec(&cluster_file(
        "topocoll-nccl-p4d",
        "p4d-24xl-topo.xml",
        2,
        8,
    ))
    .unwrap();
    assert_eq!(t.num_ranks(), 16);
    // Rank 3 is server 0's GPU 3, behind NIC 1; rank 13 server 1's GPU 5,
    // behind NIC 2.
    let r = names(&t, 3, 13);
    let joined = r.join(" | ");
    assert!(
        r[0].starts_with("s0.gpu3 -> s0.pci ffff:ff:02.0"),
        "{joined}"
    );
    assert!(
        joined.contains("s0.nic 0000:20:1b.0 -> s0.net@nic 0000:20:1b.0"),
        "{joined}"
    );
    assert!(joined.contains("fabric: h1 -> sw"), "{joined}");
    assert!(joined.contains("fabric: sw -> h6"), "{joined}");
    assert!(
        joined.contains("s1.net@nic 0000:90:1b.0 -> s1.nic 0000:90:1b.0"),
        "{joined}"
    );
    assert!(r.last().unwrap().ends_with("-> s1.gpu5"), "{joined}");
    // Inside a server the server's own routes.
    assert_eq!(
        names(&t, 8, 9),
        [
            "s1.gpu0 -> s1.pci ffff:ff:01.0",
            "s1.pci ffff:ff:01.0 -> s1.gpu1"
        ]
    );
    // The fabric's 50 GB/s is more than the PCIe link: 12 GB/s.
    assert_eq!(bottleneck(&t, 3, 13), 12e9);
    let t = parse_spec(&cluster_file(
        "topocoll-nccl-dgx",
        "dgx-a100-nvswitch.xml",
        2,
        16,
    ))
    .unwrap();
    // The ports' 200 Gb/s (25 GB/s) is more than their PCIe Gen4 x16
    // links: 24 GB/s.
    assert_eq!(bottleneck(&t, 0, 8), 24e9);
    assert_eq!(bottleneck(&t, 0, 7), 240e9);
}

#[test]
fn a_cluster_whose_fabric_has_other_than_one_host_per_port_is_refused() {
    let e = parse_spec(&cluster_file(
        "topocoll-nccl-bad",
        "p4d-24xl-topo.xml",
        2,
        7,
    ))
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("the fabric has 7 hosts; 2 servers of 4 ports need 8"),
        "{e}"
    );
}

fn refusal(text: &str) -> String {
    parse_server("bad.xml", text).unwrap_err().to_string()
}

const GPU: &str =
    r#"<pci busid="0000:07:00.0" class="0x030200" link_speed="16 GT/s" link_width="16">"#;

#[test]
fn refusals_name_the_file_and_line() {
    let e = refusal(&format!(
        "<system version=\"1\">\n<cpu numaid=\"0\">\n{GPU}\n<gpu dev=\"0\" rank=\"0\" sm=\"80\">\n<nvlink target=\"0000:99:00.0\" count=\"2\" tclass=\"0x030200\"/>\n</gpu></pci></cpu></system>"
    ));
    assert_eq!(
        e,
        "bad.xml:5: <nvlink>: target '0000:99:00.0' is no GPU of the file"
    );
    let e = refusal(&format!(
        "<system version=\"1\">\n<cpu numaid=\"0\">\n{GPU}\n<gpu dev=\"0\" rank=\"0\" sm=\"80\"/>\n<frobnicate/>\n</pci></cpu></system>"
    ));
    assert!(
        e.starts_with("bad.xml:5: <frobnicate>: is not an element NCCL reads here"),
        "{e}"
    );
    let e = refusal(
        "<system version=\"1\">\n<cpu numaid=\"0\">\n<pci busid=\"0000:07:00.0\" class=\"0x030200\" link_speed=\"9 GT/s\" link_width=\"16\"/>\n</cpu></system>",
    );
    assert!(
        e.starts_with("bad.xml:3: <pci>: link_speed \"9 GT/s\" is not a PCIe speed"),
        "{e}"
    );
    // Two hosts (host_hash): no link joins the second's GPU to the first's.
    let e = refusal(&format!(
        "<system version=\"1\">\n<cpu numaid=\"0\" host_hash=\"0x1\">\n{GPU}\n<gpu dev=\"0\" rank=\"0\" sm=\"80\"/></pci></cpu>\n<cpu numaid=\"0\" host_hash=\"0x2\">\n<pci busid=\"0000:08:00.0\" class=\"0x030200\" link_speed=\"16 GT/s\" link_width=\"16\">\n<gpu dev=\"0\" rank=\"1\" sm=\"80\"/>\n</pci></cpu></system>"
    ));
    assert!(
        e.starts_with("bad.xml:7: <gpu>: no link reaches rank 1's GPU"),
        "{e}"
    );
    let e = refusal(&format!(
        "<system version=\"1\">\n<cpu numaid=\"0\">\n{GPU}\n<gpu dev=\"0\" rank=\"0\" sm=\"80\"/></pci>\n{GPU}\n<gpu dev=\"1\" rank=\"1\" sm=\"80\"/></pci></cpu></system>"
    ));
    assert_eq!(e, "bad.xml:5: <pci>: bus id given twice (first on line 4)");
    let e = refusal(&format!(
        "<system version=\"1\">\n<cpu numaid=\"0\" host_hash=\"0x1\">\n{GPU}\n<gpu dev=\"0\" rank=\"0\" sm=\"80\"/></pci></cpu>\n<cpu numaid=\"1\" host_hash=\"0x2\"/>\n</system>"
    ));
    assert!(
        e.starts_with("bad.xml:5: cpu1: no link reaches it from rank 0's GPU"),
        "{e}"
    );
    let e = refusal("<system version=\"1\">\n<cpu numaid=\"0\"/>\n</system>");
    assert_eq!(e, "bad.xml: the file has no GPU");
    let e = refusal("<system version=\"1\">\n<cpu numaid=\"0\">\n<nic><net dev=\"0\" speed=\"fast\"/></nic>\n</cpu></system>");
    assert!(
        e.starts_with("bad.xml:3: <net>: speed=\"fast\" is not a whole number"),
        "{e}"
    );
}

#[test]
fn the_root_element_tells_nccl_from_simgrid() {
    assert!(is_nccl_xml(
        "<?xml version=\"1.0\"?>\n<!-- x -->\n<system version=\"1\">"
    ));
    assert!(!is_nccl_xml(
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"x\">\n<platform version=\"4.1\">"
    ));
    assert!(!is_nccl_xml("<systems>"));
}

#[test]
fn a_fabric_routed_pair_by_pair_carries_cluster_routes() {
    // A SimGrid cluster in a zone: routed by SimGrid's zones, pair by pair.
    let dir = std::env::temp_dir().join("topocoll-nccl-simgrid-fabric");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("fabric.xml"),
        r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <cluster id="c" prefix="port" radical="0-7" suffix="" speed="1Gf" bw="5GBps" lat="2us" bb_bw="40GBps" bb_lat="1us"/>
  </zone>
</platform>
"#,
    )
    .unwrap();
    let path = dir.join("cluster.toml");
    std::fs::write(
        &path,
        format!(
            "kind = \"cluster\"\nserver = \"{}\"\nservers = 2\nfabric = \"fabric.xml\"\n",
            data("p4d-24xl-topo.xml")
        ),
    )
    .unwrap();
    let t = parse_spec(path.to_str().unwrap()).unwrap();
    assert_eq!(t.num_ranks(), 16);
    let joined = names(&t, 0, 15).join(" | ");
    // GPU 0's NIC is port 0 (host 0); server 1's GPU 7's is its port 3 (host 7).
    assert!(joined.contains("fabric: c_link_0_UP"), "{joined}");
    assert!(joined.contains("fabric: c_backbone"), "{joined}");
    assert!(joined.contains("fabric: c_link_7_DOWN"), "{joined}");
    assert!(joined.ends_with("-> s1.gpu7"), "{joined}");
    assert_eq!(bottleneck(&t, 0, 15), 5e9);
    assert_eq!(t.route_problem(0, 15), None);
}
