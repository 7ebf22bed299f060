#!/usr/bin/env python3
"""Generate the node and relationship CSVs of data/kurikulum/ (deterministic).

The curriculum of the Program Studi Teknologi Informasi (S1) is written out below as
data: 63 courses (MK) over 8 semesters, each with one learning goal (LG), 2-5 learning
outcomes (LO) and 3-8 topics, plus 11 student outcomes (SO, KP.1 ... KP.11).
Derived edges: a course's SOs are the union of the SOs its LOs map to; each such SO is
PURSUED_IN the course and PART_OF the course's LG. `(p:MK)-[:PREREQUISITE]->(c:MK)` means
p is a prerequisite of c (as in the thesis's graph and queries).

    python tools/make_kurikulum.py            # writes data/kurikulum/nodes, data/kurikulum/rels

The CSVs are the committed data; this script only documents how they were produced.
The ground truth, examples and YAML files are written by hand.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "data" / "kurikulum"

SO = {
    1: "Kemampuan menganalisis masalah komputasi yang kompleks dan menerapkan prinsip-prinsip "
    "komputasi serta disiplin ilmu lain yang relevan untuk mengidentifikasi solusi.",
    2: "Kemampuan merancang, mengimplementasikan, dan mengevaluasi solusi berbasis komputasi "
    "untuk memenuhi serangkaian kebutuhan komputasi dalam bidang teknologi informasi.",
    3: "Kemampuan berkomunikasi secara efektif, lisan maupun tulisan, dalam berbagai konteks profesional.",
    4: "Kemampuan mengenali tanggung jawab profesional dan membuat keputusan yang tepat dalam praktik "
    "komputasi berdasarkan prinsip hukum dan etika.",
    5: "Kemampuan berperan secara efektif sebagai anggota atau pemimpin tim dalam kegiatan "
    "yang sesuai dengan bidang teknologi informasi.",
    6: "Kemampuan mengidentifikasi dan menganalisis kebutuhan pengguna serta mempertimbangkannya dalam "
    "pemilihan, pembuatan, integrasi, evaluasi, dan administrasi sistem berbasis komputer.",
    7: "Kemampuan menerapkan pengetahuan matematika, sains dasar, dan statistika untuk memodelkan "
    "dan menyelesaikan masalah rekayasa.",
    8: "Kemampuan merancang, mengonfigurasi, dan mengamankan infrastruktur jaringan dan sistem informasi.",
    9: "Kemampuan mengelola, menganalisis, dan memanfaatkan data dan informasi untuk mendukung pengambilan keputusan.",
    10: "Kemampuan belajar sepanjang hayat, melakukan penelitian, dan mengikuti perkembangan "
    "ilmu pengetahuan dan teknologi.",
    11: "Kemampuan menunjukkan sikap religius, berwawasan kebangsaan, dan menjunjung tinggi "
    "nilai-nilai Pancasila dalam kehidupan bermasyarakat.",
}

SD, TT, PU, DT = "Sains Dasar", "Topik Teknik", "Pendidikan Umum", "Desain Teknik"
KB, RPL, JK = "Kecerdasan Buatan", "Rekayasa Perangkat Lunak", "Jaringan dan Keamanan"

COURSES: list[dict] = []


def C(nama, sem, sks, klas, lg, lo, prereq=(), par=(), tipe="Wajib", jalur=None, durasi="1 semester", prefix=None):
    """One course: lo is a list of (description, [SO numbers], [topic descriptions])."""
    if prefix is None:
        prefix = {SD: "TKU", PU: "UNU"}.get(klas, "TIF")
    COURSES.append(
        dict(
            nama=nama,
            sem=sem,
            sks=sks,
            klas=klas,
            lg=lg,
            lo=lo,
            prereq=list(prereq),
            par=list(par),
            tipe=tipe,
            jalur=jalur,
            durasi=durasi,
            prefix=prefix,
        )
    )


# ---------------------------------------------------------------- semester 1
C(
    "Kalkulus Variabel Tunggal",
    1,
    3,
    SD,
    "Mahasiswa menguasai konsep limit, turunan, dan integral fungsi satu variabel serta mampu "
    "menerapkannya untuk memodelkan dan menyelesaikan masalah rekayasa.",
    [
        (
            "Mahasiswa mampu menghitung limit dan menentukan kekontinuan fungsi satu variabel.",
            [7],
            ["Fungsi dan grafik fungsi", "Limit dan kekontinuan"],
        ),
        (
            "Mahasiswa mampu menghitung turunan fungsi dan menerapkannya pada masalah laju perubahan dan optimasi.",
            [7, 1],
            ["Turunan dan aturan rantai", "Aplikasi turunan: nilai ekstrem dan optimasi"],
        ),
        (
            "Mahasiswa mampu menghitung integral tentu dan tak tentu serta menerapkannya untuk menghitung luas dan volume.",
            [7, 1],
            [
                "Integral tak tentu dan teknik substitusi",
                "Integral tentu dan teorema dasar kalkulus",
                "Aplikasi integral: luas daerah dan volume benda putar",
            ],
        ),
        (
            "Mahasiswa mampu menentukan kekonvergenan barisan dan deret tak hingga.",
            [7],
            ["Barisan dan deret tak hingga"],
        ),
    ],
)

C(
    "Fisika Mekanika Klasik",
    1,
    3,
    SD,
    "Mahasiswa memahami hukum-hukum dasar mekanika klasik dan mampu menggunakannya untuk menganalisis "
    "gerak benda dan sistem fisis sederhana.",
    [
        (
            "Mahasiswa mampu menjelaskan dan menghitung besaran kinematika gerak lurus dan gerak dua dimensi.",
            [7],
            ["Besaran, satuan, dan vektor", "Kinematika gerak lurus", "Gerak parabola dan gerak melingkar"],
        ),
        (
            "Mahasiswa mampu menerapkan hukum Newton serta prinsip usaha dan energi untuk menganalisis dinamika benda.",
            [7, 1],
            ["Hukum Newton tentang gerak", "Usaha dan energi", "Momentum dan tumbukan"],
        ),
        (
            "Mahasiswa mampu menganalisis gerak rotasi dan osilasi benda tegar.",
            [7],
            ["Dinamika rotasi benda tegar", "Getaran dan gerak harmonik sederhana"],
        ),
    ],
)

C(
    "Matematika Diskrit",
    1,
    3,
    SD,
    "Mahasiswa menguasai struktur matematika diskrit yang menjadi landasan ilmu komputer, meliputi logika, "
    "himpunan, kombinatorika, dan teori graf.",
    [
        (
            "Mahasiswa mampu menggunakan logika proposisi dan logika predikat untuk menyusun serta membuktikan pernyataan matematis.",
            [7, 1],
            ["Logika proposisi", "Logika predikat dan kuantor", "Metode pembuktian dan induksi matematika"],
        ),
        (
            "Mahasiswa mampu menerapkan konsep himpunan, relasi, dan fungsi dalam pemodelan masalah komputasi.",
            [7],
            ["Himpunan, relasi, dan fungsi"],
        ),
        (
            "Mahasiswa mampu menyelesaikan persoalan pencacahan menggunakan prinsip kombinatorika.",
            [7, 1],
            ["Kombinatorika dan prinsip sarang merpati", "Relasi rekurensi"],
        ),
        (
            "Mahasiswa mampu memodelkan masalah menggunakan graf dan pohon.",
            [1, 7],
            ["Teori graf", "Pohon dan pohon merentang"],
        ),
    ],
)

C(
    "Pemrograman Dasar",
    1,
    3,
    TT,
    "Mahasiswa mampu menyusun algoritma dan menuliskannya sebagai program terstruktur yang benar dan mudah "
    "dibaca menggunakan bahasa pemrograman Python.",
    [
        (
            "Mahasiswa mampu menjelaskan konsep dasar algoritma, variabel, tipe data, dan ekspresi.",
            [1],
            ["Algoritma dan diagram alir", "Variabel, tipe data, dan operator"],
        ),
        (
            "Mahasiswa mampu menggunakan struktur kendali percabangan dan perulangan untuk menyelesaikan masalah komputasi sederhana.",
            [1, 2],
            ["Percabangan", "Perulangan"],
        ),
        (
            "Mahasiswa mampu membuat program modular menggunakan fungsi, larik, dan berkas.",
            [2],
            ["Fungsi dan rekursi", "Larik dan string", "Operasi berkas"],
        ),
        (
            "Mahasiswa mampu menguji dan memperbaiki kesalahan (debugging) program sederhana.",
            [2, 10],
            ["Pengujian dan debugging program"],
        ),
    ],
)

C(
    "Pengantar Teknologi Informasi",
    1,
    2,
    TT,
    "Mahasiswa memperoleh gambaran menyeluruh tentang bidang teknologi informasi, komponen sistem komputer, "
    "serta peran dan profesi teknologi informasi di masyarakat.",
    [
        (
            "Mahasiswa mampu menjelaskan komponen perangkat keras dan perangkat lunak sistem komputer.",
            [6],
            ["Sejarah dan perkembangan komputer", "Perangkat keras dan perangkat lunak"],
        ),
        (
            "Mahasiswa mampu menjelaskan konsep dasar internet, jaringan, dan sistem informasi.",
            [6, 8],
            ["Internet dan World Wide Web", "Sistem informasi dalam organisasi"],
        ),
        (
            "Mahasiswa mampu menguraikan bidang keahlian dan profesi di bidang teknologi informasi.",
            [4, 10],
            ["Bidang kajian dan profesi teknologi informasi"],
        ),
    ],
)

C(
    "Pancasila",
    1,
    2,
    PU,
    "Mahasiswa memahami dan mengamalkan nilai-nilai Pancasila sebagai dasar negara, ideologi, dan pandangan "
    "hidup bangsa Indonesia dalam kehidupan profesional.",
    [
        (
            "Mahasiswa mampu menjelaskan sejarah perumusan dan kedudukan Pancasila sebagai dasar negara.",
            [11],
            ["Sejarah perumusan Pancasila", "Pancasila sebagai dasar negara"],
        ),
        (
            "Mahasiswa mampu menerapkan nilai-nilai Pancasila sebagai sistem etika dalam pengembangan ilmu dan teknologi.",
            [11, 4],
            [
                "Pancasila sebagai ideologi negara",
                "Pancasila sebagai sistem etika",
                "Pancasila sebagai dasar nilai pengembangan ilmu",
            ],
        ),
    ],
)

C(
    "Pendidikan Agama",
    1,
    2,
    PU,
    "Mahasiswa memiliki pemahaman keagamaan yang utuh dan mampu menjadikan nilai-nilai agama sebagai landasan "
    "moral dalam kehidupan pribadi, sosial, dan profesional.",
    [
        (
            "Mahasiswa mampu menjelaskan konsep ketuhanan dan kedudukan manusia menurut ajaran agama.",
            [11],
            ["Konsep ketuhanan dan keimanan", "Hakikat manusia menurut agama"],
        ),
        (
            "Mahasiswa mampu menerapkan nilai moral dan etika agama dalam kehidupan bermasyarakat dan dalam pemanfaatan teknologi.",
            [11, 4],
            ["Etika, moral, dan akhlak", "Agama, ilmu pengetahuan, dan teknologi", "Kerukunan antarumat beragama"],
        ),
    ],
)

C(
    "Bahasa Inggris",
    1,
    2,
    PU,
    "Mahasiswa mampu menggunakan bahasa Inggris secara efektif untuk membaca literatur teknis dan berkomunikasi "
    "dalam konteks akademik dan profesional.",
    [
        (
            "Mahasiswa mampu memahami teks akademik dan dokumentasi teknis berbahasa Inggris.",
            [3, 10],
            ["Reading comprehension teks teknis", "Kosakata teknologi informasi"],
        ),
        (
            "Mahasiswa mampu menulis paragraf dan surel profesional dalam bahasa Inggris.",
            [3],
            ["Academic writing: paragraf dan esai", "Penulisan surel profesional"],
        ),
        ("Mahasiswa mampu melakukan presentasi singkat dalam bahasa Inggris.", [3], ["Presentasi dan diskusi"]),
    ],
)

# ---------------------------------------------------------------- semester 2
C(
    "Aljabar Linear",
    2,
    3,
    SD,
    "Mahasiswa menguasai konsep matriks, ruang vektor, dan transformasi linear serta mampu menerapkannya pada "
    "masalah komputasi seperti grafika, analisis data, dan pembelajaran mesin.",
    [
        (
            "Mahasiswa mampu menyelesaikan sistem persamaan linear menggunakan operasi matriks.",
            [7, 1],
            ["Sistem persamaan linear dan eliminasi Gauss-Jordan", "Matriks dan operasi matriks", "Determinan"],
        ),
        (
            "Mahasiswa mampu menjelaskan konsep ruang vektor, basis, dan dimensi.",
            [7],
            ["Ruang vektor dan subruang", "Basis, dimensi, dan rank"],
        ),
        (
            "Mahasiswa mampu menghitung nilai eigen dan vektor eigen serta menerapkannya pada transformasi linear.",
            [7, 1],
            ["Transformasi linear", "Nilai eigen dan vektor eigen", "Ortogonalitas dan dekomposisi nilai singular"],
        ),
    ],
    par=["Kalkulus Variabel Jamak"],
)

C(
    "Kalkulus Variabel Jamak",
    2,
    3,
    SD,
    "Mahasiswa mampu memperluas konsep kalkulus ke fungsi beberapa variabel dan menerapkannya untuk analisis "
    "medan dan optimasi multivariabel.",
    [
        (
            "Mahasiswa mampu menghitung turunan parsial dan gradien fungsi beberapa variabel.",
            [7],
            ["Fungsi beberapa variabel", "Turunan parsial dan gradien"],
        ),
        (
            "Mahasiswa mampu menyelesaikan masalah optimasi multivariabel dengan dan tanpa kendala.",
            [7, 1],
            ["Nilai ekstrem dan pengali Lagrange"],
        ),
        (
            "Mahasiswa mampu menghitung integral lipat dan integral garis.",
            [7],
            [
                "Integral lipat dua dan lipat tiga",
                "Koordinat polar, silinder, dan bola",
                "Integral garis dan teorema Green",
            ],
        ),
    ],
    prereq=["Kalkulus Variabel Tunggal"],
)

C(
    "Fisika Listrik dan Magnet",
    2,
    3,
    SD,
    "Mahasiswa memahami fenomena kelistrikan dan kemagnetan yang mendasari cara kerja perangkat elektronik "
    "dan sistem komunikasi.",
    [
        (
            "Mahasiswa mampu menghitung medan listrik, potensial listrik, dan kapasitansi.",
            [7],
            ["Muatan listrik dan hukum Coulomb", "Medan listrik dan hukum Gauss", "Potensial listrik dan kapasitor"],
        ),
        (
            "Mahasiswa mampu menganalisis rangkaian listrik arus searah.",
            [7, 1],
            ["Arus, hambatan, dan rangkaian arus searah"],
        ),
        (
            "Mahasiswa mampu menjelaskan medan magnet, induksi elektromagnetik, dan gelombang elektromagnetik.",
            [7],
            ["Medan magnet dan gaya Lorentz", "Induksi elektromagnetik", "Gelombang elektromagnetik"],
        ),
    ],
    prereq=["Fisika Mekanika Klasik"],
    par=["Kalkulus Variabel Jamak"],
)

C(
    "Struktur Data",
    2,
    3,
    TT,
    "Mahasiswa mampu memilih, mengimplementasikan, dan menganalisis struktur data yang tepat untuk menyelesaikan "
    "masalah komputasi secara efisien.",
    [
        (
            "Mahasiswa mampu mengimplementasikan struktur data linear seperti senarai berantai, tumpukan, dan antrean.",
            [2],
            ["Tipe data abstrak", "Senarai berantai", "Tumpukan dan antrean"],
        ),
        (
            "Mahasiswa mampu mengimplementasikan struktur data hierarkis dan tabel hash.",
            [2, 1],
            ["Pohon biner dan pohon pencarian biner", "Heap dan antrean prioritas", "Tabel hash"],
        ),
        (
            "Mahasiswa mampu menganalisis kompleksitas operasi pada berbagai struktur data.",
            [1],
            ["Notasi Big-O dan analisis operasi", "Representasi graf"],
        ),
    ],
    prereq=["Pemrograman Dasar"],
)

C(
    "Sistem Digital",
    2,
    3,
    TT,
    "Mahasiswa memahami prinsip logika digital dan mampu merancang rangkaian kombinasional dan sekuensial sederhana.",
    [
        (
            "Mahasiswa mampu melakukan konversi sistem bilangan dan menyederhanakan fungsi logika.",
            [7, 1],
            ["Sistem bilangan dan kode", "Aljabar Boolean dan gerbang logika", "Peta Karnaugh"],
        ),
        ("Mahasiswa mampu merancang rangkaian logika kombinasional.", [2], ["Multiplekser, dekoder, dan penjumlah"]),
        (
            "Mahasiswa mampu merancang rangkaian sekuensial menggunakan flip-flop dan mesin keadaan hingga.",
            [2],
            ["Flip-flop dan register", "Pencacah", "Mesin keadaan hingga"],
        ),
    ],
)

C(
    "Kewarganegaraan",
    2,
    2,
    PU,
    "Mahasiswa menjadi warga negara yang memiliki wawasan kebangsaan, kesadaran bela negara, dan tanggung jawab "
    "terhadap kehidupan demokrasi.",
    [
        (
            "Mahasiswa mampu menjelaskan identitas nasional serta hak dan kewajiban warga negara.",
            [11],
            ["Identitas nasional", "Hak dan kewajiban warga negara"],
        ),
        (
            "Mahasiswa mampu menganalisis isu demokrasi, hukum, dan integrasi nasional.",
            [11, 4],
            ["Demokrasi Indonesia", "Negara hukum dan hak asasi manusia", "Wawasan Nusantara dan ketahanan nasional"],
        ),
    ],
)

C(
    "Bahasa Indonesia",
    2,
    2,
    PU,
    "Mahasiswa mampu menggunakan bahasa Indonesia yang baik dan benar dalam penulisan karya ilmiah dan "
    "komunikasi akademik.",
    [
        (
            "Mahasiswa mampu menerapkan kaidah ejaan dan tata bahasa Indonesia dalam tulisan ilmiah.",
            [3],
            ["Ejaan Bahasa Indonesia yang Disempurnakan", "Kalimat efektif dan paragraf"],
        ),
        (
            "Mahasiswa mampu menyusun karya tulis ilmiah dengan sistematika dan rujukan yang benar.",
            [3, 10],
            ["Struktur karya tulis ilmiah", "Teknik pengutipan dan daftar pustaka"],
        ),
        ("Mahasiswa mampu menyampaikan gagasan secara lisan dalam forum ilmiah.", [3], ["Presentasi ilmiah"]),
    ],
)

# ---------------------------------------------------------------- semester 3
C(
    "Statistika",
    3,
    3,
    SD,
    "Mahasiswa mampu mengumpulkan, menganalisis, dan menginterpretasikan data menggunakan metode statistika "
    "deskriptif dan inferensial.",
    [
        (
            "Mahasiswa mampu menyajikan dan meringkas data menggunakan statistika deskriptif.",
            [7, 9],
            ["Statistika deskriptif dan visualisasi data"],
        ),
        (
            "Mahasiswa mampu menghitung peluang dan menggunakan distribusi peluang diskrit dan kontinu.",
            [7],
            ["Teori peluang", "Variabel acak dan distribusi peluang"],
        ),
        (
            "Mahasiswa mampu melakukan estimasi parameter dan uji hipotesis.",
            [7, 1],
            ["Distribusi sampling", "Estimasi selang kepercayaan", "Uji hipotesis"],
        ),
        (
            "Mahasiswa mampu membangun model regresi linear sederhana dan menafsirkan hasilnya.",
            [7, 9],
            ["Regresi dan korelasi"],
        ),
    ],
    prereq=["Kalkulus Variabel Tunggal"],
)

C(
    "Persamaan Differensial",
    3,
    3,
    SD,
    "Mahasiswa mampu memodelkan sistem dinamis menggunakan persamaan diferensial dan menyelesaikannya secara analitik.",
    [
        (
            "Mahasiswa mampu menyelesaikan persamaan diferensial biasa orde satu.",
            [7],
            ["Klasifikasi persamaan diferensial", "Persamaan diferensial orde satu: terpisah, linear, dan eksak"],
        ),
        (
            "Mahasiswa mampu menyelesaikan persamaan diferensial linear orde dua dan sistem persamaan diferensial.",
            [7, 1],
            ["Persamaan diferensial linear orde dua homogen dan tak homogen", "Sistem persamaan diferensial linear"],
        ),
        (
            "Mahasiswa mampu menggunakan transformasi Laplace untuk menyelesaikan masalah nilai awal.",
            [7, 1],
            ["Transformasi Laplace", "Pemodelan sistem dinamis dengan persamaan diferensial"],
        ),
    ],
    prereq=["Kalkulus Variabel Jamak"],
    par=["Aljabar Linear"],
)

C(
    "Algoritma dan Kompleksitas",
    3,
    3,
    TT,
    "Mahasiswa mampu merancang algoritma yang efisien dengan berbagai strategi dan menganalisis kompleksitas "
    "waktu serta ruangnya.",
    [
        (
            "Mahasiswa mampu menganalisis kompleksitas waktu dan ruang algoritma secara asimptotik.",
            [1, 7],
            ["Analisis asimptotik dan relasi rekurensi", "Algoritma pengurutan dan pencarian"],
        ),
        (
            "Mahasiswa mampu menerapkan strategi divide and conquer, greedy, dan pemrograman dinamis.",
            [1, 2],
            ["Divide and conquer", "Algoritma greedy", "Pemrograman dinamis"],
        ),
        (
            "Mahasiswa mampu menerapkan algoritma graf untuk masalah lintasan terpendek dan pohon merentang minimum.",
            [1, 2],
            ["Algoritma graf: BFS, DFS, Dijkstra, dan Kruskal"],
        ),
        (
            "Mahasiswa mampu menjelaskan kelas kompleksitas P, NP, dan NP-lengkap.",
            [1],
            ["Backtracking dan branch and bound", "Kelas kompleksitas P dan NP"],
        ),
    ],
    prereq=["Struktur Data", "Matematika Diskrit"],
)

C(
    "Pemrograman Berorientasi Objek",
    3,
    3,
    TT,
    "Mahasiswa mampu merancang dan membangun perangkat lunak menggunakan paradigma berorientasi objek yang "
    "terstruktur dan dapat digunakan kembali.",
    [
        (
            "Mahasiswa mampu menjelaskan konsep kelas, objek, enkapsulasi, pewarisan, dan polimorfisme.",
            [1, 2],
            ["Kelas dan objek", "Enkapsulasi dan abstraksi", "Pewarisan dan polimorfisme"],
        ),
        (
            "Mahasiswa mampu mengimplementasikan program berorientasi objek menggunakan bahasa Java.",
            [2],
            ["Antarmuka dan kelas abstrak", "Penanganan eksepsi", "Koleksi dan generik"],
        ),
        (
            "Mahasiswa mampu menerapkan pola desain dasar dalam perancangan perangkat lunak.",
            [2, 5],
            ["Diagram kelas UML dan pola desain dasar"],
        ),
    ],
    prereq=["Struktur Data"],
)

C(
    "Basis Data",
    3,
    3,
    TT,
    "Mahasiswa mampu merancang, mengimplementasikan, dan mengelola basis data relasional untuk mendukung "
    "kebutuhan informasi organisasi.",
    [
        (
            "Mahasiswa mampu memodelkan kebutuhan data menggunakan diagram entitas-relasi.",
            [9, 6],
            ["Konsep dasar sistem basis data", "Model entitas-relasi"],
        ),
        (
            "Mahasiswa mampu menerapkan model relasional dan normalisasi untuk menghasilkan skema basis data yang baik.",
            [9, 2],
            ["Model relasional dan aljabar relasional", "Normalisasi"],
        ),
        (
            "Mahasiswa mampu menulis kueri SQL untuk mendefinisikan, memanipulasi, dan mengambil data.",
            [9, 2],
            ["SQL: DDL dan DML", "Kueri SQL lanjut: join, subkueri, dan agregasi"],
        ),
        (
            "Mahasiswa mampu menjelaskan konsep transaksi, kontrol konkurensi, dan pemulihan basis data.",
            [9],
            ["Transaksi dan kontrol konkurensi", "Indeks dan optimasi kueri"],
        ),
    ],
    prereq=["Struktur Data"],
    par=["Pemrograman Berorientasi Objek"],
)

C(
    "Organisasi dan Arsitektur Komputer",
    3,
    3,
    TT,
    "Mahasiswa memahami organisasi internal komputer dan hubungan antara perangkat keras dan perangkat lunak "
    "tingkat rendah.",
    [
        (
            "Mahasiswa mampu menjelaskan arsitektur set instruksi dan representasi data pada tingkat mesin.",
            [1, 7],
            ["Representasi data dan aritmetika komputer", "Arsitektur set instruksi dan bahasa rakitan"],
        ),
        (
            "Mahasiswa mampu menganalisis kinerja prosesor dengan teknik pipelining.",
            [1],
            ["Jalur data dan unit kendali", "Pipelining"],
        ),
        (
            "Mahasiswa mampu menjelaskan hierarki memori dan sistem masukan/keluaran.",
            [1, 6],
            ["Hierarki memori dan cache", "Sistem masukan/keluaran dan bus", "Arsitektur multiprosesor"],
        ),
    ],
    prereq=["Sistem Digital"],
)

C(
    "Interaksi Manusia dan Komputer",
    3,
    2,
    TT,
    "Mahasiswa mampu merancang dan mengevaluasi antarmuka pengguna yang mudah digunakan dengan pendekatan "
    "berpusat pada pengguna.",
    [
        (
            "Mahasiswa mampu menjelaskan prinsip faktor manusia dan usabilitas dalam desain antarmuka.",
            [6],
            ["Faktor manusia dan prinsip usabilitas"],
        ),
        (
            "Mahasiswa mampu merancang prototipe antarmuka berdasarkan kebutuhan pengguna.",
            [6, 2],
            ["Desain berpusat pada pengguna", "Prototipe dan wireframe"],
        ),
        ("Mahasiswa mampu melakukan evaluasi usabilitas antarmuka.", [6, 3], ["Evaluasi heuristik dan uji usabilitas"]),
    ],
)

# ---------------------------------------------------------------- semester 4
C(
    "Metode Numeris",
    4,
    3,
    SD,
    "Mahasiswa mampu menyelesaikan masalah matematika rekayasa secara numerik dengan komputer serta menganalisis "
    "galat hasil perhitungannya.",
    [
        (
            "Mahasiswa mampu menganalisis galat dan menemukan akar persamaan nonlinear secara numerik.",
            [7, 1],
            ["Galat dan deret Taylor", "Akar persamaan: biseksi, Newton-Raphson, dan secant"],
        ),
        (
            "Mahasiswa mampu menyelesaikan sistem persamaan linear dan melakukan interpolasi secara numerik.",
            [7],
            ["Sistem persamaan linear: dekomposisi LU dan metode iteratif", "Interpolasi dan regresi kuadrat terkecil"],
        ),
        (
            "Mahasiswa mampu menghitung integral dan menyelesaikan persamaan diferensial biasa secara numerik serta "
            "mengimplementasikannya dalam program.",
            [7, 2],
            [
                "Diferensiasi dan integrasi numerik",
                "Solusi numerik persamaan diferensial biasa: metode Euler dan Runge-Kutta",
            ],
        ),
    ],
    prereq=["Persamaan Differensial", "Aljabar Linear", "Pemrograman Dasar"],
)

C(
    "Sistem Operasi",
    4,
    3,
    TT,
    "Mahasiswa memahami konsep dan mekanisme sistem operasi modern dalam mengelola proses, memori, berkas, "
    "dan perangkat.",
    [
        (
            "Mahasiswa mampu menjelaskan struktur sistem operasi dan manajemen proses.",
            [1, 6],
            ["Struktur sistem operasi dan system call", "Proses dan thread", "Penjadwalan CPU"],
        ),
        (
            "Mahasiswa mampu menganalisis masalah sinkronisasi dan deadlock.",
            [1, 2],
            ["Sinkronisasi proses", "Deadlock"],
        ),
        (
            "Mahasiswa mampu menjelaskan manajemen memori, memori virtual, dan sistem berkas.",
            [1, 6],
            ["Manajemen memori dan memori virtual", "Sistem berkas"],
        ),
        (
            "Mahasiswa mampu mengadministrasi sistem operasi Linux menggunakan antarmuka baris perintah.",
            [6],
            ["Administrasi Linux dan shell scripting"],
        ),
    ],
    prereq=["Organisasi dan Arsitektur Komputer", "Struktur Data"],
)

C(
    "Jaringan Komputer",
    4,
    3,
    TT,
    "Mahasiswa memahami arsitektur dan protokol jaringan komputer serta mampu merancang dan mengonfigurasi "
    "jaringan lokal.",
    [
        (
            "Mahasiswa mampu menjelaskan model berlapis OSI dan TCP/IP.",
            [8],
            ["Model referensi OSI dan TCP/IP", "Lapisan fisik dan lapisan data link"],
        ),
        (
            "Mahasiswa mampu merancang skema pengalamatan IP dan konfigurasi routing.",
            [8, 2],
            ["Pengalamatan IPv4, subnetting, dan IPv6", "Routing statis dan dinamis"],
        ),
        (
            "Mahasiswa mampu menganalisis kinerja protokol lapisan transport dan lapisan aplikasi.",
            [8, 1],
            ["Lapisan transport: TCP dan UDP", "Lapisan aplikasi: DNS, HTTP, dan SMTP"],
        ),
        (
            "Mahasiswa mampu mengonfigurasi perangkat jaringan lokal secara berkelompok dalam praktikum.",
            [8, 5],
            ["VLAN dan konfigurasi switch"],
        ),
    ],
    prereq=["Organisasi dan Arsitektur Komputer"],
    par=["Sistem Operasi"],
)

C(
    "Rekayasa Perangkat Lunak",
    4,
    3,
    TT,
    "Mahasiswa mampu menerapkan prinsip dan proses rekayasa perangkat lunak untuk membangun perangkat lunak "
    "berkualitas secara sistematis dalam tim.",
    [
        (
            "Mahasiswa mampu membandingkan model proses pengembangan perangkat lunak, termasuk metode agile.",
            [2, 10],
            ["Model proses perangkat lunak", "Metode agile dan Scrum"],
        ),
        (
            "Mahasiswa mampu menganalisis dan menspesifikasikan kebutuhan perangkat lunak.",
            [6, 3],
            ["Rekayasa kebutuhan dan use case"],
        ),
        (
            "Mahasiswa mampu merancang perangkat lunak menggunakan UML.",
            [2],
            ["Pemodelan sistem dengan UML", "Perancangan arsitektur perangkat lunak"],
        ),
        (
            "Mahasiswa mampu menerapkan pengujian dan manajemen konfigurasi dalam proyek tim.",
            [2, 5],
            ["Pengujian perangkat lunak", "Manajemen konfigurasi dan kontrol versi dengan Git"],
        ),
    ],
    prereq=["Pemrograman Berorientasi Objek"],
)

C(
    "Pemrograman Web",
    4,
    3,
    TT,
    "Mahasiswa mampu membangun aplikasi web dinamis yang aman dan terhubung dengan basis data menggunakan "
    "teknologi web modern.",
    [
        (
            "Mahasiswa mampu membangun antarmuka web menggunakan HTML, CSS, dan JavaScript.",
            [2, 6],
            ["HTML dan CSS", "JavaScript dan DOM"],
        ),
        (
            "Mahasiswa mampu mengembangkan aplikasi sisi server yang terhubung ke basis data.",
            [2, 9],
            ["Pemrograman sisi server dan kerangka kerja MVC", "Akses basis data dan ORM"],
        ),
        ("Mahasiswa mampu merancang dan mengonsumsi RESTful API.", [2], ["RESTful API dan JSON"]),
        (
            "Mahasiswa mampu menerapkan praktik keamanan dasar aplikasi web.",
            [8, 4],
            ["Autentikasi, sesi, dan keamanan aplikasi web"],
        ),
    ],
    prereq=["Basis Data", "Pemrograman Berorientasi Objek"],
)

C(
    "Analisis dan Perancangan Sistem",
    4,
    3,
    TT,
    "Mahasiswa mampu menganalisis kebutuhan organisasi dan merancang sistem informasi yang sesuai menggunakan "
    "metodologi terstruktur dan berorientasi objek.",
    [
        (
            "Mahasiswa mampu mengidentifikasi kebutuhan sistem melalui analisis proses bisnis.",
            [6, 1],
            ["Siklus hidup pengembangan sistem", "Teknik pengumpulan kebutuhan", "Pemodelan proses bisnis dengan BPMN"],
        ),
        (
            "Mahasiswa mampu memodelkan sistem menggunakan diagram aliran data dan diagram UML.",
            [2, 6],
            ["Diagram aliran data", "Perancangan antarmuka dan basis data sistem"],
        ),
        (
            "Mahasiswa mampu menyusun dokumen spesifikasi dan studi kelayakan sistem.",
            [3, 6],
            ["Studi kelayakan sistem"],
        ),
    ],
    prereq=["Basis Data"],
    par=["Rekayasa Perangkat Lunak"],
)

C(
    "Etika Profesi Teknologi Informasi",
    4,
    2,
    PU,
    "Mahasiswa memahami tanggung jawab etis, hukum, dan sosial seorang profesional teknologi informasi.",
    [
        (
            "Mahasiswa mampu menjelaskan kode etik profesi dan tanggung jawab profesional di bidang teknologi informasi.",
            [4],
            ["Kode etik profesi ACM dan IEEE"],
        ),
        (
            "Mahasiswa mampu menganalisis isu hukum terkait teknologi informasi seperti UU ITE, hak kekayaan intelektual, "
            "dan perlindungan data pribadi.",
            [4],
            [
                "UU ITE dan kejahatan siber",
                "Hak kekayaan intelektual dan lisensi perangkat lunak",
                "Privasi dan perlindungan data pribadi",
            ],
        ),
        (
            "Mahasiswa mampu mengevaluasi dampak sosial teknologi informasi dan menyampaikan argumen etis secara tertulis.",
            [4, 3],
            ["Dampak sosial teknologi dan etika kecerdasan buatan"],
        ),
    ],
    prefix="TIF",
)

# ---------------------------------------------------------------- semester 5
C(
    "Kecerdasan Buatan",
    5,
    3,
    TT,
    "Mahasiswa mampu menerapkan teknik dasar kecerdasan buatan untuk membangun agen cerdas yang dapat mencari, "
    "bernalar, dan belajar.",
    [
        ("Mahasiswa mampu menjelaskan konsep agen cerdas dan lingkungannya.", [1], ["Agen cerdas dan lingkungan"]),
        (
            "Mahasiswa mampu menerapkan algoritma pencarian dan optimasi untuk menyelesaikan masalah.",
            [1, 2],
            [
                "Pencarian tanpa informasi dan pencarian heuristik",
                "Pencarian adversarial dan permainan",
                "Masalah pemenuhan kendala",
            ],
        ),
        (
            "Mahasiswa mampu merepresentasikan pengetahuan dan melakukan penalaran logis maupun probabilistik.",
            [1, 7],
            ["Representasi pengetahuan dan logika orde pertama", "Penalaran probabilistik dan jaringan Bayes"],
        ),
        (
            "Mahasiswa mampu menjelaskan dasar pembelajaran mesin dan implikasi etis sistem kecerdasan buatan.",
            [1, 4],
            ["Pengantar pembelajaran mesin"],
        ),
    ],
    prereq=["Algoritma dan Kompleksitas", "Statistika"],
)

C(
    "Keamanan Informasi",
    5,
    3,
    TT,
    "Mahasiswa memahami prinsip keamanan informasi dan mampu menerapkan kontrol keamanan untuk melindungi aset "
    "informasi organisasi.",
    [
        (
            "Mahasiswa mampu menjelaskan prinsip kerahasiaan, integritas, dan ketersediaan serta model ancaman.",
            [8, 1],
            ["Prinsip CIA dan model ancaman"],
        ),
        (
            "Mahasiswa mampu menerapkan kriptografi dasar, autentikasi, dan kontrol akses.",
            [8, 2],
            ["Kriptografi simetris dan asimetris", "Autentikasi dan kontrol akses"],
        ),
        (
            "Mahasiswa mampu mengidentifikasi kerentanan perangkat lunak dan jaringan.",
            [8, 1],
            ["Kerentanan perangkat lunak dan malware", "Keamanan jaringan dasar: firewall dan IDS"],
        ),
        (
            "Mahasiswa mampu menyusun kebijakan keamanan dan rencana penanganan insiden.",
            [8, 4],
            ["Manajemen risiko dan kebijakan keamanan"],
        ),
    ],
    prereq=["Jaringan Komputer"],
)

C(
    "Sistem Terdistribusi",
    5,
    3,
    TT,
    "Mahasiswa mampu merancang dan menganalisis sistem terdistribusi yang andal, skalabel, dan konsisten.",
    [
        (
            "Mahasiswa mampu menjelaskan karakteristik dan model arsitektur sistem terdistribusi.",
            [1, 6],
            ["Karakteristik dan arsitektur sistem terdistribusi", "Komunikasi antarproses dan RPC"],
        ),
        (
            "Mahasiswa mampu menganalisis sinkronisasi waktu, konsistensi, dan replikasi.",
            [1],
            ["Sinkronisasi waktu dan jam logis", "Konsistensi dan replikasi"],
        ),
        (
            "Mahasiswa mampu membangun layanan terdistribusi yang toleran terhadap kegagalan.",
            [2],
            ["Toleransi kegagalan dan algoritma konsensus", "Arsitektur layanan mikro"],
        ),
    ],
    prereq=["Sistem Operasi", "Jaringan Komputer"],
    par=["Keamanan Informasi"],
)

C(
    "Pemrograman Perangkat Bergerak",
    5,
    3,
    TT,
    "Mahasiswa mampu merancang dan membangun aplikasi perangkat bergerak yang responsif dan terintegrasi dengan "
    "layanan daring.",
    [
        (
            "Mahasiswa mampu menjelaskan arsitektur platform Android dan siklus hidup aplikasi.",
            [2],
            ["Arsitektur platform Android", "Activity, fragment, dan siklus hidup aplikasi"],
        ),
        (
            "Mahasiswa mampu membangun antarmuka aplikasi bergerak yang sesuai prinsip desain material.",
            [2, 6],
            ["Tata letak dan komponen antarmuka"],
        ),
        (
            "Mahasiswa mampu mengintegrasikan aplikasi bergerak dengan penyimpanan lokal dan API daring.",
            [2, 9],
            ["Penyimpanan lokal dan SQLite", "Konsumsi REST API dan pemrograman asinkron"],
        ),
    ],
    prereq=["Pemrograman Berorientasi Objek"],
    par=["Pemrograman Web"],
)

C(
    "Manajemen Proyek Teknologi Informasi",
    5,
    2,
    TT,
    "Mahasiswa mampu merencanakan, melaksanakan, dan mengendalikan proyek teknologi informasi sesuai batasan "
    "ruang lingkup, waktu, dan biaya.",
    [
        (
            "Mahasiswa mampu menyusun rencana proyek yang meliputi ruang lingkup, jadwal, dan anggaran.",
            [5, 6],
            ["Siklus hidup dan inisiasi proyek", "Work breakdown structure dan penjadwalan", "Estimasi biaya proyek"],
        ),
        (
            "Mahasiswa mampu mengelola risiko, kualitas, dan komunikasi dalam proyek.",
            [5, 3],
            ["Manajemen risiko proyek", "Manajemen komunikasi dan pemangku kepentingan"],
        ),
        ("Mahasiswa mampu menerapkan kerangka kerja agile dalam manajemen proyek.", [5], ["Manajemen proyek agile"]),
    ],
    prereq=["Rekayasa Perangkat Lunak"],
)

C(
    "Sistem Tertanam",
    5,
    3,
    TT,
    "Mahasiswa mampu merancang sistem tertanam berbasis mikrokontroler yang berinteraksi dengan sensor dan aktuator.",
    [
        (
            "Mahasiswa mampu menjelaskan arsitektur mikrokontroler dan periferalnya.",
            [1, 6],
            ["Arsitektur mikrokontroler", "GPIO, timer, dan interupsi"],
        ),
        (
            "Mahasiswa mampu memprogram mikrokontroler untuk membaca sensor dan mengendalikan aktuator.",
            [2],
            ["Antarmuka sensor dan aktuator", "Protokol komunikasi serial: UART, I2C, dan SPI"],
        ),
        ("Mahasiswa mampu menjelaskan konsep sistem waktu nyata.", [1], ["Sistem operasi waktu nyata"]),
    ],
    prereq=["Organisasi dan Arsitektur Komputer"],
)

# ---------------------------------------------------------------- semester 6
C(
    "Komputasi Awan",
    6,
    3,
    TT,
    "Mahasiswa mampu merancang, menerapkan, dan mengelola layanan berbasis komputasi awan yang skalabel dan "
    "hemat biaya.",
    [
        (
            "Mahasiswa mampu menjelaskan model layanan dan model penerapan komputasi awan.",
            [6],
            ["Model layanan IaaS, PaaS, dan SaaS", "Model penerapan awan"],
        ),
        (
            "Mahasiswa mampu menggunakan virtualisasi dan kontainer untuk menerapkan aplikasi.",
            [2, 6],
            ["Virtualisasi", "Kontainer dan orkestrasi dengan Kubernetes"],
        ),
        (
            "Mahasiswa mampu merancang arsitektur aplikasi awan yang skalabel dan aman.",
            [2, 8],
            ["Penyimpanan dan basis data awan", "Keamanan dan biaya komputasi awan"],
        ),
    ],
    prereq=["Sistem Terdistribusi"],
)

C(
    "Metodologi Penelitian",
    6,
    2,
    TT,
    "Mahasiswa mampu merancang penelitian ilmiah di bidang teknologi informasi dan menuliskannya dalam proposal "
    "penelitian.",
    [
        (
            "Mahasiswa mampu merumuskan masalah dan tujuan penelitian berdasarkan kajian pustaka.",
            [10, 1],
            [
                "Filsafat ilmu dan metode ilmiah",
                "Kajian pustaka dan state of the art",
                "Perumusan masalah dan hipotesis",
            ],
        ),
        (
            "Mahasiswa mampu memilih metode penelitian kuantitatif atau kualitatif yang sesuai.",
            [10],
            ["Metode penelitian kuantitatif dan kualitatif", "Desain eksperimen dan analisis data"],
        ),
        (
            "Mahasiswa mampu menyusun proposal penelitian sesuai kaidah penulisan ilmiah.",
            [3, 10],
            ["Penulisan proposal penelitian"],
        ),
    ],
    prereq=["Statistika", "Bahasa Indonesia"],
)

C(
    "Tata Kelola Teknologi Informasi",
    6,
    3,
    TT,
    "Mahasiswa mampu menyelaraskan pengelolaan teknologi informasi dengan strategi organisasi menggunakan "
    "kerangka kerja tata kelola dan manajemen layanan TI.",
    [
        (
            "Mahasiswa mampu menjelaskan konsep tata kelola TI dan keselarasannya dengan strategi bisnis.",
            [6, 4],
            ["Konsep tata kelola TI", "Keselarasan strategi bisnis dan TI"],
        ),
        (
            "Mahasiswa mampu menerapkan kerangka kerja COBIT dan ITIL.",
            [6],
            ["Kerangka kerja COBIT", "Manajemen layanan TI dengan ITIL"],
        ),
        (
            "Mahasiswa mampu melakukan audit sistem informasi dan penilaian tingkat kapabilitas TI.",
            [6, 1],
            ["Audit sistem informasi"],
        ),
    ],
    prereq=["Manajemen Proyek Teknologi Informasi"],
)

C(
    "Sains Data",
    6,
    3,
    TT,
    "Mahasiswa mampu mengolah, menganalisis, dan memvisualisasikan data untuk menghasilkan wawasan yang mendukung "
    "pengambilan keputusan.",
    [
        (
            "Mahasiswa mampu melakukan akuisisi, pembersihan, dan transformasi data.",
            [9],
            ["Siklus hidup sains data", "Pembersihan dan transformasi data"],
        ),
        (
            "Mahasiswa mampu melakukan analisis data eksploratif dan visualisasi data.",
            [9, 3],
            ["Analisis data eksploratif", "Visualisasi data"],
        ),
        (
            "Mahasiswa mampu membangun model prediktif sederhana dan mengomunikasikan hasilnya.",
            [9, 1],
            ["Pemodelan prediktif dasar", "Storytelling dengan data"],
        ),
    ],
    prereq=["Statistika", "Basis Data"],
)

C(
    "Teknologi Multimedia",
    6,
    3,
    TT,
    "Mahasiswa memahami representasi, kompresi, dan pemrosesan data multimedia serta mampu mengembangkan aplikasi "
    "multimedia interaktif.",
    [
        (
            "Mahasiswa mampu menjelaskan representasi digital teks, citra, audio, dan video.",
            [1, 7],
            ["Representasi citra digital dan ruang warna", "Audio digital"],
        ),
        (
            "Mahasiswa mampu menerapkan teknik kompresi data multimedia.",
            [1, 2],
            ["Kompresi citra JPEG", "Kompresi video dan streaming"],
        ),
        (
            "Mahasiswa mampu mengembangkan aplikasi multimedia interaktif.",
            [2, 6],
            ["Animasi dan grafika komputer dasar", "Pengembangan aplikasi multimedia interaktif"],
        ),
    ],
    prereq=["Interaksi Manusia dan Komputer"],
)

# ---------------------------------------------------------------- semester 7
C(
    "Proyek Senior Teknologi Informasi",
    7,
    4,
    DT,
    "Mahasiswa mampu menyelesaikan masalah nyata dari mitra melalui perancangan, pembangunan, dan evaluasi sistem "
    "teknologi informasi secara berkelompok.",
    [
        (
            "Mahasiswa mampu mengidentifikasi kebutuhan mitra dan merumuskan spesifikasi solusi teknologi informasi.",
            [6, 1],
            ["Identifikasi masalah dan kebutuhan mitra", "Spesifikasi kebutuhan dan batasan desain"],
        ),
        (
            "Mahasiswa mampu merancang dan mengimplementasikan solusi dengan mempertimbangkan batasan teknis, ekonomi, "
            "dan etika.",
            [2, 4],
            ["Perancangan solusi dan alternatif desain", "Implementasi dan integrasi sistem"],
        ),
        (
            "Mahasiswa mampu bekerja sama secara efektif dalam tim proyek lintas peran.",
            [5],
            ["Manajemen tim dan rencana kerja proyek"],
        ),
        (
            "Mahasiswa mampu mengevaluasi solusi serta mempresentasikan dan mendokumentasikan hasil proyek.",
            [3, 2],
            ["Pengujian dan evaluasi solusi", "Dokumentasi dan presentasi akhir proyek"],
        ),
    ],
    prereq=["Rekayasa Perangkat Lunak", "Manajemen Proyek Teknologi Informasi", "Analisis dan Perancangan Sistem"],
    par=["Kewirausahaan Teknologi"],
    durasi="2 semester",
)

C(
    "Kerja Praktik",
    7,
    2,
    DT,
    "Mahasiswa memperoleh pengalaman kerja profesional di industri atau instansi dan mampu menerapkan ilmu "
    "teknologi informasi dalam lingkungan kerja nyata.",
    [
        (
            "Mahasiswa mampu menerapkan pengetahuan teknologi informasi untuk menyelesaikan tugas di lingkungan kerja.",
            [2, 6],
            ["Orientasi organisasi tempat kerja praktik", "Pelaksanaan tugas kerja praktik"],
        ),
        (
            "Mahasiswa mampu bersikap profesional dan bekerja sama dalam organisasi.",
            [4, 5],
            ["Etika dan budaya kerja profesional"],
        ),
        (
            "Mahasiswa mampu menyusun laporan dan mempresentasikan hasil kerja praktik.",
            [3],
            ["Penyusunan laporan dan seminar kerja praktik"],
        ),
    ],
    prereq=["Etika Profesi Teknologi Informasi", "Rekayasa Perangkat Lunak"],
    durasi="2 bulan",
)

C(
    "Kewirausahaan Teknologi",
    7,
    3,
    PU,
    "Mahasiswa mampu mengidentifikasi peluang usaha berbasis teknologi dan menyusun model bisnis usaha rintisan digital.",
    [
        (
            "Mahasiswa mampu mengidentifikasi peluang usaha dan merumuskan proposisi nilai produk teknologi.",
            [6, 10],
            ["Pola pikir kewirausahaan", "Identifikasi peluang dan proposisi nilai"],
        ),
        (
            "Mahasiswa mampu menyusun model bisnis dan rencana pemasaran produk digital.",
            [3, 6],
            ["Business Model Canvas", "Pemasaran digital"],
        ),
        (
            "Mahasiswa mampu memvalidasi produk minimum dan mempresentasikan rencana usaha kepada investor.",
            [3, 5],
            ["Lean startup dan minimum viable product", "Pendanaan dan presentasi kepada investor"],
        ),
    ],
    prefix="TIF",
)

# ---------------------------------------------------------------- semester 8
C(
    "Tugas Akhir",
    8,
    4,
    DT,
    "Mahasiswa mampu melaksanakan penelitian atau pengembangan secara mandiri di bidang teknologi informasi dan "
    "mempertanggungjawabkannya dalam karya tulis ilmiah.",
    [
        (
            "Mahasiswa mampu merumuskan masalah penelitian dan menyusun tinjauan pustaka yang relevan.",
            [10, 1],
            ["Perumusan masalah dan tinjauan pustaka"],
        ),
        (
            "Mahasiswa mampu merancang dan melaksanakan metode penelitian atau pengembangan secara mandiri.",
            [2, 10],
            ["Pelaksanaan penelitian dan pengumpulan data", "Analisis hasil dan pembahasan"],
        ),
        (
            "Mahasiswa mampu menulis naskah tugas akhir dan mempertahankannya dalam ujian pendadaran.",
            [3, 4],
            ["Penulisan naskah tugas akhir", "Ujian pendadaran"],
        ),
    ],
    prereq=["Proyek Senior Teknologi Informasi", "Metodologi Penelitian"],
    par=["Kuliah Kerja Nyata"],
)

C(
    "Kuliah Kerja Nyata",
    8,
    3,
    PU,
    "Mahasiswa mampu memberdayakan masyarakat melalui penerapan ilmu pengetahuan dan teknologi secara interdisipliner.",
    [
        (
            "Mahasiswa mampu mengidentifikasi permasalahan dan potensi masyarakat di lokasi pengabdian.",
            [11, 1],
            ["Pembekalan dan observasi lokasi"],
        ),
        (
            "Mahasiswa mampu merancang dan melaksanakan program pemberdayaan masyarakat berbasis teknologi.",
            [5, 11],
            ["Perencanaan program kerja", "Pelaksanaan program pemberdayaan masyarakat"],
        ),
        (
            "Mahasiswa mampu melaporkan hasil kegiatan pengabdian kepada masyarakat.",
            [3],
            ["Pelaporan dan evaluasi program"],
        ),
    ],
    prereq=["Pancasila", "Kewarganegaraan"],
    durasi="2 bulan",
)

# ---------------------------------------------------------------- pilihan: Kecerdasan Buatan
P = dict(tipe="Pilihan")
C(
    "Penambangan Data",
    5,
    3,
    TT,
    "Mahasiswa mampu menemukan pola dan pengetahuan yang berguna dari kumpulan data besar menggunakan teknik "
    "penambangan data.",
    [
        (
            "Mahasiswa mampu melakukan praproses data untuk keperluan penambangan data.",
            [9],
            ["Proses penemuan pengetahuan dan praproses data"],
        ),
        (
            "Mahasiswa mampu menerapkan algoritma klasifikasi, klastering, dan aturan asosiasi.",
            [9, 1],
            [
                "Klasifikasi: pohon keputusan dan naive Bayes",
                "Klastering: k-means dan hierarkis",
                "Aturan asosiasi: Apriori dan FP-Growth",
            ],
        ),
        (
            "Mahasiswa mampu mengevaluasi dan menginterpretasikan pola hasil penambangan data.",
            [9, 3],
            ["Evaluasi model dan validasi silang"],
        ),
    ],
    prereq=["Statistika", "Basis Data"],
    jalur=KB,
    **P,
)

C(
    "Pembelajaran Mesin",
    6,
    3,
    TT,
    "Mahasiswa mampu membangun, melatih, dan mengevaluasi model pembelajaran mesin untuk masalah prediksi dan "
    "pengenalan pola.",
    [
        (
            "Mahasiswa mampu menjelaskan konsep pembelajaran terawasi dan tak terawasi.",
            [1, 7],
            ["Konsep dasar pembelajaran mesin"],
        ),
        (
            "Mahasiswa mampu menerapkan model regresi, klasifikasi, dan klastering.",
            [1, 2],
            [
                "Regresi linear dan regresi logistik",
                "Support vector machine",
                "Pohon keputusan dan metode ensemble",
                "Klastering dan reduksi dimensi",
            ],
        ),
        (
            "Mahasiswa mampu mengevaluasi kinerja model dan mengatasi overfitting.",
            [1, 9],
            ["Evaluasi model, bias-varians, dan regularisasi"],
        ),
        ("Mahasiswa mampu menjelaskan dasar jaringan saraf tiruan.", [1], ["Jaringan saraf tiruan"]),
    ],
    prereq=["Kecerdasan Buatan", "Aljabar Linear"],
    par=["Sains Data"],
    jalur=KB,
    **P,
)

C(
    "Sistem Berbasis Pengetahuan",
    6,
    3,
    TT,
    "Mahasiswa mampu merepresentasikan pengetahuan domain dalam bentuk ontologi dan graf pengetahuan serta "
    "membangun sistem berbasis pengetahuan.",
    [
        (
            "Mahasiswa mampu memodelkan pengetahuan domain menggunakan ontologi.",
            [1, 9],
            ["Akuisisi dan representasi pengetahuan", "Ontologi, RDF, dan OWL"],
        ),
        (
            "Mahasiswa mampu membangun graf pengetahuan dan menulis kueri graf.",
            [9, 2],
            ["Graf pengetahuan dan basis data graf", "Bahasa kueri graf: SPARQL dan Cypher"],
        ),
        ("Mahasiswa mampu membangun sistem pakar berbasis aturan.", [2], ["Sistem pakar dan mesin inferensi"]),
    ],
    prereq=["Kecerdasan Buatan", "Basis Data"],
    jalur=KB,
    **P,
)

C(
    "Pengolahan Bahasa Alami",
    7,
    3,
    TT,
    "Mahasiswa mampu membangun aplikasi yang memahami dan menghasilkan teks bahasa alami, termasuk bahasa Indonesia.",
    [
        (
            "Mahasiswa mampu melakukan praproses teks dan merepresentasikan kata secara numerik.",
            [1, 9],
            ["Tokenisasi, stemming, dan praproses teks bahasa Indonesia", "Representasi kata dan word embedding"],
        ),
        (
            "Mahasiswa mampu membangun model klasifikasi teks dan pelabelan urutan.",
            [2, 1],
            ["Klasifikasi teks dan analisis sentimen", "Pengenalan entitas bernama"],
        ),
        (
            "Mahasiswa mampu menerapkan model bahasa berbasis transformer.",
            [2, 10],
            ["Model bahasa dan arsitektur transformer", "Model bahasa besar dan rekayasa prompt"],
        ),
    ],
    prereq=["Pembelajaran Mesin"],
    jalur=KB,
    **P,
)

C(
    "Visi Komputer",
    7,
    3,
    TT,
    "Mahasiswa mampu mengolah dan menganalisis citra digital untuk mengenali objek dan memahami isi visual.",
    [
        (
            "Mahasiswa mampu menerapkan teknik pengolahan citra digital dasar.",
            [1, 7],
            ["Pembentukan citra dan filter spasial", "Deteksi tepi dan segmentasi citra"],
        ),
        ("Mahasiswa mampu mengekstraksi fitur dan mencocokkan citra.", [1], ["Ekstraksi fitur: SIFT dan HOG"]),
        (
            "Mahasiswa mampu membangun sistem deteksi dan klasifikasi objek.",
            [2],
            ["Klasifikasi citra dengan CNN", "Deteksi objek"],
        ),
    ],
    prereq=["Pembelajaran Mesin", "Teknologi Multimedia"],
    jalur=KB,
    **P,
)

C(
    "Analitik Big Data",
    7,
    3,
    TT,
    "Mahasiswa mampu mengolah dan menganalisis data berskala besar menggunakan platform komputasi terdistribusi.",
    [
        (
            "Mahasiswa mampu menjelaskan karakteristik big data dan ekosistem Hadoop.",
            [9],
            ["Karakteristik big data", "Ekosistem Hadoop dan HDFS"],
        ),
        (
            "Mahasiswa mampu memproses data berskala besar menggunakan MapReduce dan Spark.",
            [9, 2],
            ["MapReduce", "Apache Spark", "Pemrosesan aliran data"],
        ),
    ],
    prereq=["Sains Data", "Sistem Terdistribusi"],
    jalur=KB,
    **P,
)

C(
    "Pembelajaran Mendalam",
    8,
    3,
    TT,
    "Mahasiswa mampu merancang dan melatih jaringan saraf dalam untuk data citra, teks, dan deret waktu.",
    [
        (
            "Mahasiswa mampu menjelaskan dan mengimplementasikan propagasi balik serta teknik optimasi jaringan saraf.",
            [1, 7],
            ["Perceptron multilapis dan propagasi balik", "Optimasi dan regularisasi jaringan saraf"],
        ),
        (
            "Mahasiswa mampu membangun model jaringan saraf konvolusional dan rekuren.",
            [2],
            ["Jaringan saraf konvolusional", "Jaringan saraf rekuren dan LSTM"],
        ),
        (
            "Mahasiswa mampu menerapkan transfer learning dan model generatif.",
            [2, 10],
            ["Transfer learning", "Model generatif: autoencoder dan GAN"],
        ),
    ],
    prereq=["Pembelajaran Mesin"],
    jalur=KB,
    **P,
)

# ---------------------------------------------------------------- pilihan: Rekayasa Perangkat Lunak
C(
    "Rekayasa Kebutuhan Perangkat Lunak",
    5,
    3,
    TT,
    "Mahasiswa mampu menggali, menganalisis, mendokumentasikan, dan memvalidasi kebutuhan perangkat lunak bersama "
    "pemangku kepentingan.",
    [
        (
            "Mahasiswa mampu menggali kebutuhan dari pemangku kepentingan dengan berbagai teknik elisitasi.",
            [6, 3],
            ["Identifikasi pemangku kepentingan", "Teknik elisitasi kebutuhan"],
        ),
        (
            "Mahasiswa mampu menganalisis dan memodelkan kebutuhan fungsional dan nonfungsional.",
            [6, 1],
            ["Kebutuhan fungsional dan nonfungsional", "User story dan kriteria penerimaan"],
        ),
        (
            "Mahasiswa mampu memvalidasi dan mengelola perubahan kebutuhan.",
            [6],
            ["Validasi dan manajemen perubahan kebutuhan"],
        ),
    ],
    prereq=["Rekayasa Perangkat Lunak"],
    jalur=RPL,
    **P,
)

C(
    "Pengujian Perangkat Lunak",
    6,
    3,
    TT,
    "Mahasiswa mampu merencanakan dan melaksanakan pengujian perangkat lunak secara sistematis untuk menjamin "
    "kualitas perangkat lunak.",
    [
        (
            "Mahasiswa mampu merancang kasus uji menggunakan teknik black-box dan white-box.",
            [2, 1],
            [
                "Dasar pengujian dan tingkatan pengujian",
                "Teknik pengujian black-box",
                "Teknik pengujian white-box dan cakupan kode",
            ],
        ),
        (
            "Mahasiswa mampu mengotomatisasi pengujian unit, integrasi, dan antarmuka.",
            [2],
            ["Otomatisasi pengujian dan test-driven development"],
        ),
        (
            "Mahasiswa mampu mengukur kualitas perangkat lunak berdasarkan standar mutu.",
            [2, 4],
            ["Penjaminan mutu dan standar ISO/IEC 25010"],
        ),
    ],
    prereq=["Rekayasa Perangkat Lunak"],
    jalur=RPL,
    **P,
)

C(
    "Arsitektur Perangkat Lunak",
    6,
    3,
    TT,
    "Mahasiswa mampu merancang dan mengevaluasi arsitektur perangkat lunak yang memenuhi atribut kualitas sistem.",
    [
        (
            "Mahasiswa mampu menjelaskan gaya dan pola arsitektur perangkat lunak.",
            [2],
            ["Gaya arsitektur: berlapis, client-server, dan event-driven", "Pola arsitektur layanan mikro"],
        ),
        (
            "Mahasiswa mampu mendokumentasikan arsitektur dari berbagai sudut pandang.",
            [2, 3],
            ["Dokumentasi arsitektur dan model C4"],
        ),
        (
            "Mahasiswa mampu mengevaluasi arsitektur terhadap atribut kualitas.",
            [1, 2],
            ["Atribut kualitas dan taktik arsitektur", "Evaluasi arsitektur dengan ATAM"],
        ),
    ],
    prereq=["Rekayasa Perangkat Lunak"],
    par=["Pengujian Perangkat Lunak"],
    jalur=RPL,
    **P,
)

C(
    "Pengembangan Gim",
    7,
    3,
    TT,
    "Mahasiswa mampu merancang dan mengembangkan gim digital interaktif menggunakan mesin gim.",
    [
        ("Mahasiswa mampu merancang konsep dan mekanika permainan.", [2, 6], ["Desain gim dan mekanika permainan"]),
        (
            "Mahasiswa mampu mengimplementasikan gim menggunakan mesin gim.",
            [2],
            ["Mesin gim dan game loop", "Fisika dan deteksi tabrakan", "Kecerdasan buatan dalam gim"],
        ),
        (
            "Mahasiswa mampu melakukan uji permainan dan menyempurnakan gim bersama tim.",
            [5, 2],
            ["Playtesting dan publikasi gim"],
        ),
    ],
    prereq=["Pemrograman Berorientasi Objek", "Teknologi Multimedia"],
    jalur=RPL,
    **P,
)

C(
    "DevOps dan Rekayasa Rilis",
    7,
    3,
    TT,
    "Mahasiswa mampu menerapkan praktik DevOps untuk mengotomatisasi pembangunan, pengujian, dan rilis perangkat lunak.",
    [
        ("Mahasiswa mampu menjelaskan budaya dan prinsip DevOps.", [5, 2], ["Budaya dan prinsip DevOps"]),
        (
            "Mahasiswa mampu membangun pipeline integrasi dan pengiriman berkelanjutan.",
            [2, 6],
            ["Integrasi berkelanjutan", "Pengiriman dan penerapan berkelanjutan", "Infrastructure as code"],
        ),
        (
            "Mahasiswa mampu memantau sistem produksi dan menangani insiden.",
            [6],
            ["Pemantauan, logging, dan observabilitas"],
        ),
    ],
    prereq=["Komputasi Awan", "Pengujian Perangkat Lunak"],
    jalur=RPL,
    **P,
)

# ---------------------------------------------------------------- pilihan: Jaringan dan Keamanan
C(
    "Kriptografi",
    5,
    3,
    TT,
    "Mahasiswa memahami dasar matematis dan algoritma kriptografi serta mampu menerapkannya untuk mengamankan "
    "komunikasi dan data.",
    [
        (
            "Mahasiswa mampu menjelaskan teori bilangan yang mendasari kriptografi.",
            [7],
            ["Teori bilangan dan aritmetika modular"],
        ),
        (
            "Mahasiswa mampu menerapkan algoritma kriptografi simetris dan kunci publik.",
            [8, 2],
            ["Kriptografi klasik", "Cipher blok: DES dan AES", "Kriptografi kunci publik: RSA dan kurva eliptik"],
        ),
        (
            "Mahasiswa mampu menerapkan fungsi hash, tanda tangan digital, dan infrastruktur kunci publik.",
            [8],
            ["Fungsi hash dan tanda tangan digital", "Infrastruktur kunci publik dan protokol TLS"],
        ),
    ],
    prereq=["Matematika Diskrit"],
    par=["Keamanan Informasi"],
    jalur=JK,
    **P,
)

C(
    "Keamanan Jaringan",
    6,
    3,
    TT,
    "Mahasiswa mampu merancang dan mengelola pertahanan jaringan terhadap berbagai jenis serangan.",
    [
        (
            "Mahasiswa mampu menganalisis jenis serangan terhadap jaringan komputer.",
            [8, 1],
            ["Jenis serangan jaringan", "Analisis lalu lintas jaringan"],
        ),
        (
            "Mahasiswa mampu mengonfigurasi firewall, VPN, dan sistem deteksi intrusi.",
            [8, 2],
            ["Firewall dan segmentasi jaringan", "VPN dan IPsec", "Sistem deteksi dan pencegahan intrusi"],
        ),
        ("Mahasiswa mampu merancang arsitektur jaringan yang aman.", [8], ["Arsitektur zero trust"]),
    ],
    prereq=["Keamanan Informasi"],
    jalur=JK,
    **P,
)

C(
    "Internet of Things",
    6,
    3,
    TT,
    "Mahasiswa mampu merancang dan membangun sistem Internet of Things yang menghubungkan perangkat, jaringan, dan "
    "layanan awan.",
    [
        (
            "Mahasiswa mampu menjelaskan arsitektur dan protokol komunikasi IoT.",
            [8, 6],
            ["Arsitektur sistem IoT", "Protokol IoT: MQTT dan CoAP"],
        ),
        (
            "Mahasiswa mampu membangun prototipe sistem IoT yang terintegrasi dengan platform awan.",
            [2, 8],
            ["Integrasi perangkat dengan platform awan", "Pengolahan data sensor"],
        ),
        (
            "Mahasiswa mampu mengidentifikasi isu keamanan dan privasi pada sistem IoT.",
            [8, 4],
            ["Keamanan dan privasi IoT"],
        ),
    ],
    prereq=["Jaringan Komputer", "Sistem Tertanam"],
    par=["Keamanan Jaringan"],
    jalur=JK,
    **P,
)

C(
    "Forensik Digital",
    7,
    3,
    TT,
    "Mahasiswa mampu melakukan investigasi forensik digital sesuai prosedur hukum untuk mengungkap insiden keamanan.",
    [
        (
            "Mahasiswa mampu menjelaskan prosedur forensik digital dan aspek hukumnya.",
            [4, 8],
            ["Prosedur forensik dan rantai bukti", "Aspek hukum forensik digital"],
        ),
        (
            "Mahasiswa mampu melakukan akuisisi dan analisis bukti digital pada komputer dan jaringan.",
            [8, 1],
            ["Forensik sistem berkas", "Forensik jaringan", "Forensik perangkat bergerak"],
        ),
        ("Mahasiswa mampu menyusun laporan investigasi forensik.", [3, 4], ["Penyusunan laporan forensik"]),
    ],
    prereq=["Keamanan Jaringan"],
    jalur=JK,
    **P,
)

C(
    "Jaringan Nirkabel dan Bergerak",
    7,
    3,
    TT,
    "Mahasiswa memahami teknologi jaringan nirkabel dan seluler serta mampu merancang jaringan nirkabel yang andal.",
    [
        (
            "Mahasiswa mampu menjelaskan prinsip propagasi sinyal dan teknologi akses nirkabel.",
            [8, 7],
            ["Propagasi sinyal radio", "Teknik akses jamak"],
        ),
        (
            "Mahasiswa mampu merancang dan mengonfigurasi jaringan WLAN.",
            [8, 2],
            ["Standar WLAN IEEE 802.11", "Perancangan jaringan WLAN"],
        ),
        ("Mahasiswa mampu menjelaskan arsitektur jaringan seluler 4G dan 5G.", [8], ["Jaringan seluler 4G dan 5G"]),
    ],
    prereq=["Jaringan Komputer", "Fisika Listrik dan Magnet"],
    jalur=JK,
    **P,
)

C(
    "Pengujian Penetrasi",
    8,
    3,
    TT,
    "Mahasiswa mampu melakukan pengujian penetrasi secara etis untuk menemukan dan melaporkan kerentanan sistem.",
    [
        (
            "Mahasiswa mampu merencanakan pengujian penetrasi sesuai kaidah etika dan hukum.",
            [4, 8],
            ["Metodologi dan etika pengujian penetrasi"],
        ),
        (
            "Mahasiswa mampu melakukan pengintaian, pemindaian, dan eksploitasi kerentanan.",
            [8, 1],
            ["Pengintaian dan pemindaian", "Eksploitasi kerentanan aplikasi web", "Eskalasi hak akses"],
        ),
        (
            "Mahasiswa mampu menyusun laporan temuan dan rekomendasi perbaikan.",
            [3, 8],
            ["Pelaporan dan rekomendasi mitigasi"],
        ),
    ],
    prereq=["Keamanan Jaringan", "Pemrograman Web"],
    jalur=JK,
    **P,
)


# ---------------------------------------------------------------- build
def build() -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
    by_name = {c["nama"]: c for c in COURSES}
    assert len(by_name) == len(COURSES), "duplicate course name"
    # kode: <prefix>21<semester><2-digit sequence within semester><sks>
    seq: dict[int, int] = {}
    for c in COURSES:
        seq[c["sem"]] = seq.get(c["sem"], 0) + 1
        c["kode"] = f"{c['prefix']}21{c['sem']}{seq[c['sem']]:02d}{c['sks']}"
    nodes: dict[str, list[dict]] = {"MK": [], "SO": [], "LG": [], "LO": [], "topic": []}
    rels: dict[str, list[dict]] = {"PREREQUISITE": [], "CAN_PARALLELIZED": [], "PURSUED_IN": [], "PART_OF": []}

    def rel(t, fl, fi, tl, ti):
        rels[t].append({"from_label": fl, "from_id": fi, "to_label": tl, "to_id": ti})

    for n, d in SO.items():
        nodes["SO"].append({"id": f"KP.{n}", "kode": f"KP.{n}", "deskripsi": d})
    for c in COURSES:
        k, nama = c["kode"], c["nama"]
        assert 2 <= len(c["lo"]) <= 5, nama
        n_topics = sum(len(t) for _, _, t in c["lo"])
        assert 3 <= n_topics <= 8, (nama, n_topics)
        assert (c["tipe"] == "Pilihan") == (c["jalur"] is not None), nama
        nodes["MK"].append(
            {
                "id": k,
                "kode": k,
                "nama": nama,
                "sks": c["sks"],
                "durasi": c["durasi"],
                "tipe": c["tipe"],
                "klasifikasi": c["klas"],
                "semester": c["sem"],
                "jalur": c["jalur"] or "",
            }
        )
        lg_id = f"LG-{k}"
        nodes["LG"].append({"id": lg_id, "nama": f"Tujuan Pembelajaran {nama}", "deskripsi": c["lg"], "MK": nama})
        rel("PURSUED_IN", "LG", lg_id, "MK", k)
        sos: list[int] = []
        t_no = 0
        for i, (desc, so_list, topics) in enumerate(c["lo"], start=1):
            assert 1 <= len(so_list) <= 2 and all(s in SO for s in so_list), (nama, i)
            lo_id = f"LO-{k}-{i}"
            nodes["LO"].append({"id": lo_id, "nama": f"LO{i}", "deskripsi": desc, "MK": nama})
            rel("PURSUED_IN", "LO", lo_id, "MK", k)
            for s in so_list:
                rel("PART_OF", "LO", lo_id, "SO", f"KP.{s}")
                if s not in sos:
                    sos.append(s)
            for t in topics:
                t_no += 1
                t_id = f"T-{k}-{t_no}"
                nodes["topic"].append({"id": t_id, "nama": f"Topik {t_no}", "deskripsi": t, "MK": nama})
                rel("PURSUED_IN", "topic", t_id, "MK", k)
                rel("PART_OF", "topic", t_id, "LO", lo_id)
        for s in sorted(sos):
            rel("PURSUED_IN", "SO", f"KP.{s}", "MK", k)
            rel("PART_OF", "SO", f"KP.{s}", "LG", lg_id)
    for c in COURSES:
        for p in c["prereq"]:
            assert by_name[p]["sem"] < c["sem"], (c["nama"], p)
            # (p)-[:PREREQUISITE]->(c): p is a prerequisite of c (the thesis's direction)
            rel("PREREQUISITE", "MK", by_name[p]["kode"], "MK", c["kode"])
        for p in c["par"]:
            assert p not in c["prereq"], (c["nama"], p)
            rel("CAN_PARALLELIZED", "MK", c["kode"], "MK", by_name[p]["kode"])
    return nodes, rels


def write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def main() -> int:
    nodes, rels = build()
    for label, rows in nodes.items():
        write(OUT / "nodes" / f"{label}.csv", rows)
    for typ, rows in rels.items():
        write(OUT / "rels" / f"{typ}.csv", rows)
    wajib = sum(c["sks"] for c in COURSES if c["tipe"] == "Wajib")
    print(
        {k: len(v) for k, v in nodes.items()} | {k: len(v) for k, v in rels.items()},
        f"sks wajib={wajib}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
